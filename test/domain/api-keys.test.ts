import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, parseApiKey, redactApiKey, secretsEqual, type KeyType, type Mode } from '../../src/kernel/api-keys.ts';

const pairs: { type: KeyType; mode: Mode; prefix: string }[] = [
  { type: 'SECRET', mode: 'TEST', prefix: 'sk_test_' },
  { type: 'SECRET', mode: 'LIVE', prefix: 'sk_live_' },
  { type: 'PUBLISHABLE', mode: 'TEST', prefix: 'pk_test_' },
  { type: 'PUBLISHABLE', mode: 'LIVE', prefix: 'pk_live_' },
];

const body32 = 'aB3'.repeat(10) + 'xY';

describe.each(pairs)('$type $mode keys', ({ type, mode, prefix }) => {
  it(`are ${prefix} followed by 32 base62 characters`, () => {
    const key = generateApiKey(type, mode);
    expect(key.startsWith(prefix)).toBe(true);
    expect(key.slice(prefix.length)).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(key).toHaveLength(prefix.length + 32);
  });

  it('parse back to their type and mode', () => {
    expect(parseApiKey(generateApiKey(type, mode))).toEqual({ type, mode });
  });

  it('are different every time', () => {
    expect(generateApiKey(type, mode)).not.toBe(generateApiKey(type, mode));
  });

  it('redact to the prefix, an ellipsis and the last four characters', () => {
    const key = generateApiKey(type, mode);
    const redacted = redactApiKey(key);
    expect(redacted).toBe(`${prefix}…${key.slice(-4)}`);
    const middle = key.slice(prefix.length, -4);
    expect(redacted).not.toContain(middle);
    // No run of five characters from the secret part survives.
    for (let i = 0; i + 5 <= middle.length; i++) expect(redacted).not.toContain(middle.slice(i, i + 5));
  });
});

describe('parseApiKey', () => {
  it.each([
    ['an unknown type', `ak_test_${body32}`],
    ['an unknown mode', `sk_prod_${body32}`],
    ['an upper-case prefix', `SK_TEST_${body32}`],
    ['no mode', `sk_${body32}`],
    ['31 characters', `sk_test_${body32.slice(1)}`],
    ['33 characters', `sk_test_${body32}Z`],
    ['a hyphen', `sk_test_${body32.slice(1)}-`],
    ['an underscore', `sk_test_${body32.slice(1)}_`],
    ['a non-ASCII letter', `sk_test_${body32.slice(1)}é`],
    ['a trailing newline', `sk_test_${body32}\n`],
    ['a leading space', ` sk_test_${body32}`],
    ['nothing', ''],
    ['only the prefix', 'sk_test_'],
    ['an admin-style key', 'admin_0123456789abcdefghijklmnopqrstuv'],
    ['a long random admin secret', 'x'.repeat(40)],
  ])('rejects a key with %s', (_label, key) => {
    expect(parseApiKey(key)).toBeNull();
  });

  it('accepts a hand-written key of the right shape', () => {
    expect(parseApiKey(`pk_live_${body32}`)).toEqual({ type: 'PUBLISHABLE', mode: 'LIVE' });
  });
});

describe('hashApiKey', () => {
  it('is the lowercase hex SHA-256 of the key', () => {
    const key = generateApiKey('SECRET', 'TEST');
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
  });

  it('matches the published SHA-256 test vector', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('differs for different keys', () => {
    expect(hashApiKey(`sk_test_${body32}`)).not.toBe(hashApiKey(`sk_live_${body32}`));
  });
});

describe('secretsEqual', () => {
  it.each([
    ['equal strings', 'sk_test_abc', 'sk_test_abc', true],
    ['two empty strings', '', '', true],
    ['different strings of equal length', 'sk_test_abc', 'sk_test_abd', false],
    ['a prefix of the other', 'sk_test_abc', 'sk_test_abcd', false],
    ['different lengths', 'short', 'a much longer secret', false],
    ['empty and non-empty', '', 'a', false],
    ['non-empty and empty', 'a', '', false],
    ['case differences', 'Secret', 'secret', false],
  ])('%s (%j vs %j) → %s', (_label, a, b, expected) => {
    expect(secretsEqual(a, b)).toBe(expected);
  });
});
