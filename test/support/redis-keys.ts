// Removes what a test wrote to the shared Redis: every key under a prefix of its own.
import type { Redis } from 'ioredis';

export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  for await (const keys of redis.scanStream({ match: `${prefix}:*`, count: 500 }) as AsyncIterable<string[]>) {
    if (keys.length > 0) await redis.unlink(...keys);
  }
}
