// API key formats and hashing. Keys are 192-bit random strings, so one SHA-256 is enough to store them
// (no password stretching needed) and lets a key be found by its hash with an index lookup.
import { createHash, timingSafeEqual } from 'node:crypto';
import { secretBase62 } from './ids.ts';

export type KeyType = 'SECRET' | 'PUBLISHABLE';
export type Mode = 'TEST' | 'LIVE';

const TYPE_PREFIX: Record<KeyType, string> = { SECRET: 'sk', PUBLISHABLE: 'pk' };
const KEY_PATTERN = /^(sk|pk)_(test|live)_[0-9A-Za-z]{32}$/;

export function generateApiKey(type: KeyType, mode: Mode): string {
  return `${TYPE_PREFIX[type]}_${mode.toLowerCase()}_${secretBase62(32)}`;
}

/** What a key's text says about it, or null when it is not one of our key formats. */
export function parseApiKey(key: string): { type: KeyType; mode: Mode } | null {
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  return { type: match[1] === 'sk' ? 'SECRET' : 'PUBLISHABLE', mode: match[2] === 'test' ? 'TEST' : 'LIVE' };
}

/** A secret's SHA-256: an API key's hex is what is stored (hashApiKey); raw, it is what secrets are compared by (digestsEqual). */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function hashApiKey(key: string): string {
  return secretDigest(key).toString('hex');
}

/** A recognisable, non-secret form for lists: prefix and the last four characters. */
export function redactApiKey(key: string): string {
  return `${key.slice(0, key.lastIndexOf('_') + 1)}…${key.slice(-4)}`;
}

/** Constant-time equality of two secrets' digests (secretDigest: one length, whatever the secrets' lengths). */
export const digestsEqual = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);

/** Constant-time equality of two secrets of any length (hashing first equalises the lengths). */
export function secretsEqual(a: string, b: string): boolean {
  return digestsEqual(secretDigest(a), secretDigest(b));
}
