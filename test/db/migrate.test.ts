// The migration runner: applies each migration once (even when several processes start together), in a
// transaction, records it in Prisma's ledger, and refuses to run when an applied file was edited.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { migrate, MigrationError, readMigrations } from '../../src/platform/db/migrate.ts';
import { ensureDatabase } from '../../src/platform/db/reachability.ts';

const created: string[] = [];
const serverUrl = (() => {
  const url = new URL(inject('databaseUrl'));
  url.pathname = '/postgres';
  return url;
})();

async function freshDatabase(): Promise<string> {
  const url = new URL(serverUrl);
  url.pathname = `/${new URL(inject('databaseUrl')).pathname.slice(1)}_m${randomBytes(3).toString('hex')}`;
  await ensureDatabase(url.toString());
  created.push(url.pathname.slice(1));
  return url.toString();
}

async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(join(dir, name));
    await writeFile(join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

async function query<T extends pg.QueryResultRow>(databaseUrl: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  const client = new pg.Client({ connectionString: serverUrl.toString() });
  await client.connect();
  for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  await client.end();
});

describe('migrate', () => {
  it('applies the project’s migrations in order, records them like Prisma, and is a no-op the second time', async () => {
    const url = await freshDatabase();
    const names = (await readMigrations()).map((migration) => migration.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names).toEqual([...names].sort());
    expect(await migrate(url)).toEqual(names);
    expect(await migrate(url)).toEqual([]);
    const ledger = await query<{ migration_name: string; checksum: string; finished_at: Date }>(
      url,
      'SELECT migration_name, checksum, finished_at FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(ledger.map((row) => row.migration_name)).toEqual(names);
    expect(ledger.every((row) => /^[0-9a-f]{64}$/.test(row.checksum) && row.finished_at instanceof Date)).toBe(true);
  });

  it('applies each migration exactly once when several processes migrate at the same time', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({
      '001_a': 'CREATE TABLE a (id int); INSERT INTO a VALUES (1);',
      '002_b': 'CREATE TABLE b (id int); INSERT INTO a VALUES (2);',
    });
    const results = await Promise.all([migrate(url, dir), migrate(url, dir), migrate(url, dir), migrate(url, dir)]);
    expect(results.flat().sort()).toEqual(['001_a', '002_b']);
    expect(await query(url, 'SELECT id FROM a ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('rolls back a failing migration entirely and applies nothing after it', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({
      '001_ok': 'CREATE TABLE ok (id int);',
      '002_broken': 'CREATE TABLE half (id int); INSERT INTO missing_table VALUES (1);',
      '003_later': 'CREATE TABLE later (id int);',
    });
    await expect(migrate(url, dir)).rejects.toThrow(/002_broken failed and was rolled back/);
    const tables = await query<{ table_name: string }>(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1");
    expect(tables.map((row) => row.table_name)).toEqual(['_prisma_migrations', 'ok']);
    const ledger = await query<{ migration_name: string }>(url, 'SELECT migration_name FROM _prisma_migrations');
    expect(ledger).toEqual([{ migration_name: '001_ok' }]);
  });

  it('refuses to run when an applied migration was edited, and changes nothing', async () => {
    const url = await freshDatabase();
    const dir = await migrationsDir({ '001_a': 'CREATE TABLE a (id int);' });
    await migrate(url, dir);
    await writeFile(join(dir, '001_a', 'migration.sql'), 'CREATE TABLE a (id bigint);');
    await mkdir(join(dir, '002_b'));
    await writeFile(join(dir, '002_b', 'migration.sql'), 'CREATE TABLE b (id int);');
    const error = await migrate(url, dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toMatch(/001_a was changed after it was applied/);
    const tables = await query<{ table_name: string }>(url, "SELECT table_name FROM information_schema.tables WHERE table_name = 'b'");
    expect(tables).toEqual([]);
  });

  it('creates the database when it does not exist', async () => {
    const url = await freshDatabase(); // ensureDatabase created it
    const rows = await query<{ one: number }>(url, 'SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
    await ensureDatabase(url); // and a second call is harmless
  });
});
