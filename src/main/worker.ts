// Entry point of the worker role (production): runs scheduled payment syncs; expects the database to be migrated.
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { startWorker } from './worker-app.ts';
import { run } from './run.ts';

run('worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const worker = await startWorker(config, logger);
  logger.info({ concurrency: config.WORKER_CONCURRENCY, metricsUrl: worker.metricsUrl }, 'worker running');
  return worker.close;
});
