// One fresh database per test run (so runs never collide), migrated once, dropped at the end.
// Redis is shared; every run gets its own key prefix.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.ts';
import { ensureDatabase } from '../../src/db/reachability.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisPrefix: string;
  }
}

export default async function setup(project: TestProject) {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
  const databaseUrl = new URL(server);
  databaseUrl.pathname = `/payments_test_${runId}`;
  await ensureDatabase(databaseUrl.toString());
  await migrate(databaseUrl.toString());
  project.provide('databaseUrl', databaseUrl.toString());
  project.provide('redisPrefix', `test_${runId}`);

  return async () => {
    if (process.env.KEEP_TEST_DATABASE) return;
    const client = new pg.Client({ connectionString: server.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(databaseUrl.pathname.slice(1))} WITH (FORCE)`);
    await client.end();
  };
}
