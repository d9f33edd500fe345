// Entry point of the worker role (production): runs scheduled payment syncs; expects the database to be migrated.
import { startTracing } from '../platform/tracing.ts';
import { run } from './run.ts';

// Before the app's modules load, so that the libraries tracing patches are patched (docs/operations.md, "Tracing").
const stopTracing = await startTracing('payments-worker');
const { startWorker } = await import('./worker-app.ts');
const { loadConfig } = await import('../platform/config.ts');
const { createLogger } = await import('../platform/logger.ts');

run('worker', async () => {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const worker = await startWorker(config, logger);
  logger.info({ concurrency: config.WORKER_CONCURRENCY, webhookConcurrency: config.WEBHOOK_CONCURRENCY, metricsUrl: worker.metricsUrl }, 'worker running');
  return async () => {
    await worker.close();
    await stopTracing();
  };
});
