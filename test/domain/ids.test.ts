import { describe, expect, it } from 'vitest';
import { ID_PREFIXES, isId, newId, randomBase62, secretBase62, type IdKind } from '../../src/kernel/ids.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const kinds = Object.keys(ID_PREFIXES) as IdKind[];

describe('newId', () => {
  it.each(kinds)('%s ids are the prefix, an underscore and 24 base62 characters', (kind) => {
    const id = newId(kind);
    expect(id).toMatch(new RegExp(`^${ID_PREFIXES[kind]}_[0-9A-Za-z]{24}$`));
  });

  it('10,000 ids are all distinct', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId('payment')));
    expect(ids.size).toBe(10_000);
  });
});

describe('isId', () => {
  it.each(kinds)('accepts a %s id', (kind) => {
    expect(isId(kind, newId(kind))).toBe(true);
  });

  it.each(kinds)('rejects ids of every other kind as a %s id', (kind) => {
    for (const other of kinds.filter((k) => k !== kind)) {
      expect(isId(kind, newId(other)), `${other} id accepted as ${kind}`).toBe(false);
    }
  });

  const body = 'A'.repeat(24);
  it.each([
    ['23 characters', `pay_${'A'.repeat(23)}`],
    ['25 characters', `pay_${'A'.repeat(25)}`],
    ['no body', 'pay_'],
    ['empty string', ''],
    ['bare prefix', 'pay'],
    ['a hyphen', `pay_${'A'.repeat(23)}-`],
    ['an underscore in the body', `pay_${'A'.repeat(23)}_`],
    ['a non-ASCII letter', `pay_${'A'.repeat(23)}é`],
    ['a space', `pay_${'A'.repeat(23)} `],
    ['a trailing newline', `pay_${body}\n`],
    ['a leading space', ` pay_${body}`],
    ['an upper-case prefix', `PAY_${body}`],
    ['a different separator', `pay-${body}`],
  ])('rejects a payment id with %s', (_label, value) => {
    expect(isId('payment', value)).toBe(false);
  });

  it('accepts a hand-written id of the right shape', () => {
    expect(isId('payment', `pay_${body}`)).toBe(true);
  });
});

// Ids draw from a pooled CSPRNG; secrets (API keys) from a draw of their own. Both must be uniform base62.
describe.each([
  ['randomBase62', randomBase62],
  ['secretBase62', secretBase62],
])('%s', (_name, base62) => {
  it.each([1, 24, 100])('returns %i base62 characters', (length) => {
    const text = base62(length);
    expect(text).toHaveLength(length);
    expect(text).toMatch(/^[0-9A-Za-z]+$/);
  });

  it('uses every symbol roughly equally often', () => {
    const counts = new Map<string, number>();
    for (const char of base62(62_000)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...BASE62].sort());
    for (const symbol of BASE62) {
      const count = counts.get(symbol) ?? 0;
      expect(count, `symbol ${symbol}`).toBeGreaterThanOrEqual(500);
      expect(count, `symbol ${symbol}`).toBeLessThanOrEqual(1500);
    }
  });
});
