// Applies the SQL migrations in prisma/migrations, in name order, each in its own transaction, under a
// PostgreSQL advisory lock so that several processes starting at once apply each migration exactly once.
// The ledger is Prisma's own `_prisma_migrations` table (same columns, SHA-256 checksums), so a machine
// that has the Prisma CLI can run `prisma migrate deploy` / `migrate status` against the same database.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { StartupError } from '../startup-error.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));
/** Arbitrary, fixed: the advisory lock that serialises migration runs. */
const MIGRATION_LOCK_ID = 7_264_019_331;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends StartupError {}

export async function readMigrations(directory = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(directory, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

const CREATE_LEDGER = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** Applies what is pending and returns the names applied now. Refuses to run when an applied file changed. */
export async function migrate(databaseUrl: string, directory = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(directory);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await client.query(CREATE_LEDGER);
    const { rows } = await client.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Map(rows.map((row) => [row.migration_name, row.checksum]));
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined && checksum !== migration.checksum) {
        throw new MigrationError(`migration ${migration.name} was changed after it was applied; add a new migration instead of editing an applied one`);
      }
    }
    const pending = migrations.filter((migration) => !applied.has(migration.name));
    for (const migration of pending) {
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), migration.checksum, migration.name],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new MigrationError(`migration ${migration.name} failed and was rolled back: ${(error as Error).message}`);
      }
    }
    return pending.map((migration) => migration.name);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
    await client.end();
  }
}
