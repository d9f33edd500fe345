// The pool of public randomness (src/kernel/public-random.ts) that ids and GCM IVs draw from. A view's buffer and
// offset say where in which pool its bytes are, so each byte handed out can be placed without watching the generator
// (the suite shares modules across files: this pool may already be in use when the file starts).
import { describe, expect, it } from 'vitest';
import { publicRandomByte, publicRandomBytes } from '../../src/kernel/public-random.ts';

describe('the pool of public randomness', () => {
  it('hands each byte out once, in order: a single byte drawn between two views is the one between them in the pool', () => {
    let placed = 0;
    for (let round = 0; round < 1_000; round += 1) {
      const before = publicRandomBytes(12);
      const byte = publicRandomByte();
      const after = publicRandomBytes(12);
      if (after.buffer !== before.buffer) continue; // the pool was refilled in between
      expect([after.byteOffset - before.byteOffset, byte]).toEqual([13, new Uint8Array(before.buffer)[before.byteOffset + 12]]);
      placed += 1;
    }
    // 25 bytes a round: a refill of the 4,096-byte pool falls inside a round only now and then.
    expect(placed).toBeGreaterThan(900);
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
