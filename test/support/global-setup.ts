// One fresh database per test run (so runs never collide), migrated once, dropped at the end.
// Redis is shared; every run gets its own key prefix, and its keys are deleted at the end.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/platform/config.ts';
import { createScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { deleteKeysMatching, deleteKeysUnder } from './redis-keys.ts';

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
  const redisPrefix = `test_${runId}`;
  const encryptionKey = randomBytes(32).toString('hex');
  project.provide('databaseUrl', database.url);
  project.provide('redisPrefix', redisPrefix);
  project.provide('encryptionKey', encryptionKey);

  return async () => {
    if (process.env.KEEP_TEST_DATABASE) return;
    await database.drop();
    // The Redis tests use unless one starts its own (testEnv names none): every key is under the run's prefix, or
    // under a stack's, which extends it (test/support/stack.ts). Queues' delayed jobs, rate limits, routing's signals.
    const { REDIS_URL } = loadConfig({ DATABASE_URL: database.url, ENCRYPTION_KEY: encryptionKey, REDIS_PREFIX: redisPrefix });
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      await deleteKeysUnder(redis, redisPrefix);
      await deleteKeysMatching(redis, `${redisPrefix}_*`); // the stacks' prefixes
    } finally {
      redis.disconnect();
    }
  };
}
