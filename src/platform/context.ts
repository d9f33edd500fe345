// What every service is built from. One instance per process.
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { SecretBox } from '../kernel/secret-box.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './http/metrics.ts';
import type { ReadCache } from './cache/read-cache.ts';

export interface ServiceContext {
  db: Database;
  secretBox: SecretBox;
  config: Config;
  logger: Logger;
  /** This process's Prometheus registry and instruments (docs/operations.md, "Metrics"). */
  metrics: Metrics;
  /** Where processors and browsers reach this service: PUBLIC_URL, or the address the API listens on. */
  publicUrl: string;
  /** API keys, business profiles and connector accounts as every request reads them, invalidated on every change (docs/architecture.md, "Read cache"). */
  cache: ReadCache;
}
