// Removes what a test wrote to the shared Redis: every key under a prefix of its own.
import type { Redis } from 'ioredis';

export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  await deleteKeysMatching(redis, `${prefix}:*`);
}

/** Every key that `match` (a SCAN pattern) names. */
export async function deleteKeysMatching(redis: Redis, match: string): Promise<void> {
  for await (const keys of redis.scanStream({ match, count: 500 }) as AsyncIterable<string[]>) {
    if (keys.length > 0) await redis.unlink(...keys);
  }
}
