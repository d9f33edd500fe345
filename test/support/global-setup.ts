// One fresh database per test run (so runs never collide), migrated once, dropped at the end.
// Redis is shared; every run gets its own key prefix.
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { createScratchDatabase } from '../../src/platform/db/scratch-database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisPrefix: string;
    /** This run's ENCRYPTION_KEY: random, so no test relies on a key in the source; one for the run, since every API and worker of it shares the database. */
    encryptionKey: string;
  }
}

export default async function setup(project: TestProject) {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const server = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const database = await createScratchDatabase(server, `payments_test_${runId}`);
  project.provide('databaseUrl', database.url);
  project.provide('redisPrefix', `test_${runId}`);
  project.provide('encryptionKey', randomBytes(32).toString('hex'));

  return async () => {
    if (!process.env.KEEP_TEST_DATABASE) await database.drop();
  };
}
