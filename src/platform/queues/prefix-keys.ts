// Removing what a run left in a shared Redis: every key under its REDIS_PREFIX (BullMQ's queues, rate-limit
// windows), nothing else.
import type { Redis } from 'ioredis';

export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.unlink(...keys);
  } while (cursor !== '0');
}
