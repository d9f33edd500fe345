// The pool of public randomness (src/kernel/public-random.ts) that ids and GCM IVs draw from. The generator is
// the real one, watched, so each byte handed out can be traced to its place in the pool it came from.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { publicRandomByte, publicRandomBytes } from '../../src/kernel/public-random.ts';

vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return { ...crypto, randomBytes: vi.fn(crypto.randomBytes) };
});

/** The pools the generator has filled so far, the newest last. */
const pools = () => vi.mocked(randomBytes).mock.results.map((result) => result.value as Buffer);

describe('the pool of public randomness', () => {
  it('hands each byte of a pool out once, in order, to single bytes and views alike, and starts a new pool at its first byte', () => {
    let at = { pool: -1, offset: 0 };
    for (let draw = 0; draw < 3_000; draw += 1) {
      const filled = pools().length;
      if (draw % 3 === 0) {
        const byte = publicRandomByte();
        if (pools().length > filled) at = { pool: pools().length - 1, offset: 0 };
        expect(byte).toBe(pools()[at.pool]![at.offset]);
        at.offset += 1;
      } else {
        const view = publicRandomBytes(12);
        if (pools().length > filled) at = { pool: pools().length - 1, offset: 0 };
        expect([view.buffer === pools()[at.pool]!.buffer, view.byteOffset - pools()[at.pool]!.byteOffset, view.length]).toEqual([true, at.offset, 12]);
        at.offset += 12;
      }
    }
    // 3,000 draws of 1 or 12 bytes: past several refills of the 4,096-byte pool.
    expect(pools().length).toBeGreaterThan(4);
  });

  it('hands out views that keep their bytes after the pool refills', () => {
    const views = Array.from({ length: 1_000 }, () => publicRandomBytes(12));
    const copies = views.map((view) => Buffer.from(view));
    for (let drawn = 0; drawn < 10_000; drawn += 1) publicRandomByte();
    expect(views.map((view) => view.toString('hex'))).toEqual(copies.map((copy) => copy.toString('hex')));
  });

  it('refuses more bytes at once than the pool holds', () => {
    expect(() => publicRandomBytes(4_097)).toThrow(RangeError);
  });
});
