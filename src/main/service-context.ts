// The parts every process role shares: a database pool, the secret box, configuration and the logger. It lives
// beside the roles' composition (api-app.ts, worker-app.ts) rather than in src/modules, because it builds the
// database client, which the modules only know as a type.
import type { Config } from '../platform/config.ts';
import { createDatabase } from '../platform/db/client.ts';
import { SecretBox } from '../kernel/secret-box.ts';
import type { Logger } from '../platform/logger.ts';
import type { ServiceContext } from '../platform/context.ts';
import { createMetrics } from '../platform/http/metrics.ts';
import { ReadCache } from '../platform/cache/read-cache.ts';

export function createServiceContext(config: Config, logger: Logger): ServiceContext {
  const metrics = createMetrics();
  return {
    db: createDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE, config.DATABASE_TRANSACTION_MAX_WAIT_MS),
    secretBox: new SecretBox(config.encryptionKey),
    config,
    logger,
    metrics,
    publicUrl: config.PUBLIC_URL ?? `http://127.0.0.1:${config.PORT}`,
    cache: new ReadCache({
      redisUrl: config.REDIS_URL,
      channel: `${config.REDIS_PREFIX}:cache:invalidate`,
      maxEntries: config.READ_CACHE_MAX_ENTRIES,
      ttlMs: config.READ_CACHE_TTL_MS,
      logger,
      metrics,
    }),
  };
}
