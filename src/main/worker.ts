// Entry point of the worker role (production): runs scheduled payment syncs; expects the database to be migrated.
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { startWorker } from '../worker/worker.ts';
import { run } from './run.ts';

run('worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const worker = await startWorker(config, logger);
  logger.info({ concurrency: config.WORKER_CONCURRENCY }, 'worker running');
  return worker.close;
});
