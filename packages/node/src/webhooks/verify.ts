// Verifying the service's outgoing webhooks (docs/webhooks.md, "Verifying with the SDK"): both signatures the
// service sends, over the exact bytes received, in constant time, and the signed timestamp against replays.
// node:crypto only: no network, no other dependency.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@payments-orchestrator/client-core';
import type { WebhookEvent } from './types.ts';

export type WebhookVerificationCode = 'WEBHOOK_SIGNATURE_INVALID' | 'WEBHOOK_TIMESTAMP_OUT_OF_RANGE';

/** A delivery that does not verify: answer it 401 (or 400) and do not apply it. Its message never holds the key. */
export class WebhookVerificationError extends ApiError {
  declare readonly code: WebhookVerificationCode;

  constructor(code: WebhookVerificationCode, message: string) {
    super(message, { code });
    this.name = 'WebhookVerificationError';
  }
}

/** The request's headers: a fetch `Headers`, or Node's `IncomingMessage.headers` (or any record; names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the signed `webhook-timestamp` may be from `now`, either way, in seconds (Standard Webhooks' 5 minutes by default). */
  toleranceSeconds?: number;
  /** The receiver's clock (a valid Date, or finite milliseconds since the epoch; RangeError otherwise); the current time by default. */
  now?: Date | number;
}

export const DEFAULT_TOLERANCE_SECONDS = 300;

const SIGNATURE_512_HEADER = 'x-webhook-signature-512';
/** The replaced key's digest, sent beside the current one while a rotation's overlap lasts (docs/webhooks.md). */
const PREVIOUS_SIGNATURE_512_HEADER = 'x-webhook-signature-512-previous';

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  // Repeated headers combine as fetch's Headers combines them.
  return Array.isArray(value) ? value.join(', ') : value;
}

function requiredHeader(headers: WebhookHeaders, name: string): string {
  const value = headerOf(headers, name);
  if (value === undefined || value === '') throw invalid(`${name} header is missing`);
  return value;
}

function bytesOf(rawBody: string | Buffer | Uint8Array): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (Buffer.isBuffer(rawBody)) return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError('rawBody must be the request body as received: a string, Buffer or Uint8Array (not parsed JSON)');
}

const sameBytes = (given: Buffer, expected: Buffer) => given.length === expected.length && timingSafeEqual(given, expected);

const invalid = (message: string) => new WebhookVerificationError('WEBHOOK_SIGNATURE_INVALID', message);

/**
 * The seed's signature: lowercase hex HMAC-SHA512 of the body, with the current key; during a key rotation's
 * overlap `X-Webhook-Signature-512-Previous` carries the replaced key's, so a receiver still holding that key verifies too.
 */
function checkSignature512(body: Buffer, headers: WebhookHeaders, key: string): void {
  const header = requiredHeader(headers, SIGNATURE_512_HEADER);
  const previous = headerOf(headers, PREVIOUS_SIGNATURE_512_HEADER);
  const digests = previous === undefined ? [header] : [header, previous];
  if (!digests.every((digest) => /^[0-9a-f]{128}$/.test(digest))) {
    throw invalid('X-Webhook-Signature-512 (and -Previous, when sent) must be 128 lowercase hex digits (HMAC-SHA512)');
  }
  const expected = createHmac('sha512', key).update(body).digest();
  // Both compared, whichever matches: the time taken does not say which one did.
  const matches = digests.map((digest) => sameBytes(Buffer.from(digest, 'hex'), expected));
  if (!matches.includes(true)) {
    throw invalid('X-Webhook-Signature-512 does not match the body: hash the raw bytes received, with this profile’s key');
  }
}

/** Standard Webhooks: one of the space-separated `v1,<base64>` signatures (several while a key rotates) signs `{id}.{timestamp}.{body}`. Returns the signed timestamp. */
function checkStandardSignature(body: Buffer, headers: WebhookHeaders, key: string): number {
  const id = requiredHeader(headers, 'webhook-id');
  const timestamp = requiredHeader(headers, 'webhook-timestamp');
  const signatures = requiredHeader(headers, 'webhook-signature');
  if (!/^\d{1,15}$/.test(timestamp)) throw invalid('webhook-timestamp must be whole seconds since the epoch');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  const matches = signatures.split(' ').some((entry) => {
    const separator = entry.indexOf(',');
    return entry.slice(0, separator) === 'v1' && sameBytes(Buffer.from(entry.slice(separator + 1), 'base64'), expected);
  });
  if (!matches) throw invalid('webhook-signature has no v1 signature of this webhook-id, webhook-timestamp and body with this profile’s key');
  return Number(timestamp);
}

function checkTimestamp(signedSeconds: number, { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = Date.now() }: VerifyWebhookOptions): void {
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) throw new RangeError('toleranceSeconds must be a finite number of seconds, 0 or more');
  const nowSeconds = (now instanceof Date ? now.getTime() : now) / 1000;
  // NaN compares false with everything: the check below would pass a delivery signed at any time.
  if (!Number.isFinite(nowSeconds)) throw new RangeError('now must be a valid Date or a finite number of milliseconds since the epoch');
  if (Math.abs(nowSeconds - signedSeconds) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'WEBHOOK_TIMESTAMP_OUT_OF_RANGE',
      `webhook-timestamp is more than ${toleranceSeconds} s from now: a replayed old delivery, or a clock off`,
    );
  }
}

/**
 * The webhook in `rawBody`, once both its signatures verify under `key` (the business profile's
 * payment_response_hash_key of the event's mode) and its signed timestamp is within the tolerance; throws
 * WebhookVerificationError otherwise. Pass the body exactly as received: JSON parsed and serialized again
 * no longer matches. The event is typed, not validated: the signature vouches for it.
 */
export function verify(rawBody: string | Buffer | Uint8Array, headers: WebhookHeaders, key: string, options: VerifyWebhookOptions = {}): WebhookEvent {
  if (typeof key !== 'string' || key === '') throw new TypeError("key must be the business profile's payment_response_hash_key (a non-empty string)");
  const body = bytesOf(rawBody);
  checkSignature512(body, headers, key);
  const signedSeconds = checkStandardSignature(body, headers, key);
  checkTimestamp(signedSeconds, options);
  return JSON.parse(body.toString('utf8')) as WebhookEvent;
}
