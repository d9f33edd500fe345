import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/kernel/secret-box.ts';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const box = new SecretBox(randomBytes(32));

/** Replaces one base64url character with one whose top bit differs, so the decoded bytes always change. */
function flipChar(text: string, index: number): string {
  const value = BASE64URL.indexOf(text[index]!);
  return text.slice(0, index) + BASE64URL[value ^ 0b100000] + text.slice(index + 1);
}

describe('SecretBox', () => {
  it.each([
    ['an empty string', ''],
    ['ASCII', 'whsec_0123456789abcdef'],
    ['unicode', 'pässwörd – 秘密 🔐'],
    ['10 KB', 'x'.repeat(10 * 1024)],
    ['JSON with dots', JSON.stringify({ apiKey: 'a.b.c', secret: 'd.e' })],
  ])('round-trips %s', (_label, plaintext) => {
    const sealed = box.seal(plaintext);
    expect(sealed.startsWith('v1.')).toBe(true);
    expect(sealed.split('.')).toHaveLength(4);
    if (plaintext.length > 0) expect(sealed).not.toContain(plaintext);
    expect(box.open(sealed)).toBe(plaintext);
  });

  it('seals the same plaintext differently each time (random IV)', () => {
    const first = box.seal('same secret');
    const second = box.seal('same secret');
    expect(first).not.toBe(second);
    expect(first.split('.')[1]).not.toBe(second.split('.')[1]);
    expect(box.open(first)).toBe(box.open(second));
  });

  it('never repeats an IV, across the refills of the pool of random bytes its IVs come from (GCM must never reuse one under a key)', () => {
    const ivs = Array.from({ length: 1_000 }, () => box.seal('x').split('.')[1]!);
    expect(new Set(ivs).size).toBe(ivs.length);
    // 12 bytes each, as GCM's IV is.
    expect(new Set(ivs.map((iv) => Buffer.from(iv, 'base64url').length))).toEqual(new Set([12]));
  });

  it('cannot be opened with a different key', () => {
    const sealed = box.seal('for the first key only');
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });

  it.each([
    ['iv', 1],
    ['tag', 2],
    ['ciphertext', 3],
  ] as const)('rejects a change to any single character of the %s', (_part, partIndex) => {
    const sealed = box.seal('a webhook signing key');
    const parts = sealed.split('.');
    const part = parts[partIndex]!;
    expect(part.length).toBeGreaterThan(0);
    for (let i = 0; i < part.length; i++) {
      const tampered = parts.with(partIndex, flipChar(part, i)).join('.');
      expect(() => box.open(tampered), `character ${i} changed`).toThrow();
    }
  });

  it.each(['', 'v2.a.b.c', 'v1.a.b', 'v1', 'not sealed at all'])('rejects the malformed input %j', (input) => {
    expect(() => box.open(input)).toThrow();
  });

  it('rejects a sealed value with another version prefix', () => {
    const sealed = box.seal('secret');
    expect(() => box.open(sealed.replace(/^v1\./, 'v2.'))).toThrow();
  });

  it.each([0, 16, 31, 33, 64])('rejects a %i-byte key', (length) => {
    expect(() => new SecretBox(randomBytes(length))).toThrow(/32-byte/);
  });

  it('accepts a 32-byte key', () => {
    expect(() => new SecretBox(Buffer.alloc(32, 7))).not.toThrow();
  });
});

describe('tag length', () => {
  it('refuses a sealed secret whose authentication tag was truncated', () => {
    const box = new SecretBox(Buffer.alloc(32, 7));
    const [version, iv, tag, ciphertext] = box.seal('signing key').split('.');
    const truncated = Buffer.from(tag!, 'base64url').subarray(0, 4).toString('base64url');
    expect(() => box.open([version, iv, truncated, ciphertext].join('.'))).toThrow();
  });

  it('refuses extra parts', () => {
    const box = new SecretBox(Buffer.alloc(32, 7));
    expect(() => box.open(`${box.seal('x')}.junk`)).toThrow();
  });
});
