// What every service is built from. One instance per process.
import type { Config } from './config.ts';
import type { Database, SqlPool } from './db/client.ts';
import type { SecretBox } from '../kernel/secret-box.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './http/metrics.ts';

export interface ServiceContext {
  db: Database;
  /** The pool under `db` (the same connections), for a hot path's prepared statements; `db.$disconnect()` ends it. */
  sql: SqlPool;
  secretBox: SecretBox;
  config: Config;
  logger: Logger;
  /** This process's Prometheus registry and instruments (docs/operations.md, "Metrics"). */
  metrics: Metrics;
  /** Where processors and browsers reach this service: PUBLIC_URL, or the address the API listens on. */
  publicUrl: string;
}
