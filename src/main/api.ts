// Entry point of the API role (production): serves HTTP; expects the database to be migrated.
import { startApi } from './api-app.ts';
import { loadConfig } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { run } from './run.ts';

run('api', async () => {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const api = await startApi(config, logger);
  logger.info({ url: api.url }, 'api listening');
  return api.close;
});
