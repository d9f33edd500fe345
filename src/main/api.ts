// Entry point of the API role (production): serves HTTP; expects the database to be migrated.
import { startTracing } from '../platform/tracing.ts';
import { run } from './run.ts';

// Before the app's modules load, so that the libraries tracing patches are patched (docs/operations.md, "Tracing").
const stopTracing = await startTracing('payments-api');
const { startApi } = await import('./api-app.ts');
const { loadConfig } = await import('../platform/config.ts');
const { createLogger } = await import('../platform/logger.ts');

run('api', async () => {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const api = await startApi(config, logger);
  logger.info({ url: api.url }, 'api listening');
  return async () => {
    await api.close();
    await stopTracing();
  };
});
