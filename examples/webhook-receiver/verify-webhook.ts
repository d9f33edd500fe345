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

/** How far a webhook's signed timestamp may be from the receiver's clock, either way (as Standard Webhooks libraries allow). */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60;

type Headers = Record<string, string | string[] | undefined>;

/**
 * True when the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) sign exactly
 * `rawBody` under `key`, and the signed timestamp is within TIMESTAMP_TOLERANCE_SECONDS of `now`: the
 * signature covers the timestamp, so a captured delivery replayed later is refused.
 */
export function verifyWebhookTimestamp(rawBody: Buffer | string, headers: Headers, key: string, now: number = Date.now()): boolean {
  const [id, timestamp, signatures] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => headers[name]);
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string' || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(now / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  // Space-separated `v1,<base64>` entries (several while a key is rotated): one must match.
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    const given = Buffer.from(signature ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
