// Verifying this service's webhooks, for merchants: copy this file (it needs only node:crypto). The seed's
// receiver steps: read the raw body before parsing, compute HMAC-SHA512 over it with the profile's
// payment_response_hash_key, hex-encode, compare with X-Webhook-Signature-512 in constant time.
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * True when `signatureHeader` (the X-Webhook-Signature-512 value) is the signature of exactly `rawBody`
 * under `key`. Pass the bytes as received: JSON that was parsed and serialized again no longer matches.
 */
export function verifyWebhook(rawBody: Buffer | string, signatureHeader: string | undefined | null, key: string): boolean {
  if (typeof signatureHeader !== 'string' || !/^[0-9a-f]{128}$/.test(signatureHeader)) return false;
  const expected = createHmac('sha512', key).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(signatureHeader, 'hex'));
}
