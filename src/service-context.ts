// The parts every process role shares: a database pool, the secret box, configuration and the logger. It lives
// beside the roles' composition (app.ts, worker/) rather than in src/services, because it builds the database
// client, which the services only know as a type.
import type { Config } from './config.ts';
import { createDatabase } from './db/client.ts';
import { SecretBox } from './domain/secret-box.ts';
import type { Logger } from './logger.ts';
import type { ServiceContext } from './services/context.ts';

export function createServiceContext(config: Config, logger: Logger): ServiceContext {
  return {
    db: createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
    secretBox: new SecretBox(config.encryptionKey),
    config,
    logger,
    publicUrl: config.PUBLIC_URL ?? `http://127.0.0.1:${config.PORT}`,
  };
}
