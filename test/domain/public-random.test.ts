// The pool of public randomness (src/kernel/public-random.ts) that ids and GCM IVs draw from.
import { describe, expect, it } from 'vitest';
import { publicRandomByte, publicRandomBytes } from '../../src/kernel/public-random.ts';

describe('publicRandomBytes', () => {
  it('hands out views that keep their bytes after the pool refills, and never the same bytes twice', () => {
    const views = Array.from({ length: 1_000 }, () => publicRandomBytes(12));
    const copies = views.map((view) => Buffer.from(view));
    // Well past a refill of the 4,096-byte pool, by bytes and by views alike.
    for (let drawn = 0; drawn < 10_000; drawn += 1) publicRandomByte();
    expect(views.map((view) => view.toString('hex'))).toEqual(copies.map((copy) => copy.toString('hex')));
    expect(new Set(copies.map((copy) => copy.toString('hex'))).size).toBe(copies.length);
  });

  it('refuses more bytes at once than the pool holds', () => {
    expect(() => publicRandomBytes(4_097)).toThrow(RangeError);
  });
});
