// Authenticated encryption of secrets at rest (AES-256-GCM). Format: "v1.<iv>.<tag>.<ciphertext>", base64url.
// The version prefix leaves room for key rotation without a data migration.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { publicRandomBytes } from './public-random.ts';

/** GCM's IV: random, from the pool of public randomness (an IV is sent with its ciphertext), never reused under a key. */
const IV_BYTES = 12;

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = key;
  }

  seal(plaintext: string): string {
    const iv = publicRandomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  open(sealed: string): string {
    const parts = sealed.split('.');
    const [version, iv, tag, ciphertext] = parts;
    if (parts.length !== 4 || version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error('not a sealed secret');
    }
    // A fixed 16-byte tag: GCM would otherwise accept a truncated tag, which makes forgery far easier.
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}
