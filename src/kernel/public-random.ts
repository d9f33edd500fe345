// CSPRNG bytes for values that are public once used (ids, GCM IVs), drawn from one pool: one call into the generator
// for many values instead of one per value (each is a native job's worth of work). Bytes waiting in memory give
// nothing away; a secret never comes from here (ids.ts, secretBase62).
import { randomBytes } from 'node:crypto';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

function refill(): void {
  pool = randomBytes(POOL_BYTES);
  taken = 0;
}

/** The pool's next byte, each byte used once. */
export function publicRandomByte(): number {
  if (taken === pool.length) refill();
  return pool[taken++]!;
}

/**
 * The pool's next `count` bytes, each used once: a view of the pool, which a refill replaces rather than overwrites,
 * so the view keeps its bytes.
 */
export function publicRandomBytes(count: number): Buffer {
  if (count > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} pooled bytes at once; ${count} asked`);
  if (pool.length - taken < count) refill();
  taken += count;
  return pool.subarray(taken - count, taken);
}
