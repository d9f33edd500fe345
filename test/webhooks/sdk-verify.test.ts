// The server SDK's webhooks.verify (docs/webhooks.md, "Verifying with the SDK") against the service's own
// signer (src/modules/events/signature.ts): it accepts exactly what the service sends, within the timestamp
// tolerance, and refuses every other body, header, key or instant with a WebhookVerificationError.
import { ApiError } from '@payments-orchestrator/client-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serializeWebhook, standardWebhookHeaders, webhookSignature } from '../../src/modules/events/signature.ts';
import { WebhookVerificationError, webhooks, type WebhookHeaders } from '@payments-orchestrator/node';

const KEY = 'phk_sdk_verify_key';
const NOW = new Date('2026-11-23T10:00:00.000Z');
const EVENT_ID = 'evt_sdk_verify';

const EVENT = { merchantId: 'mer_1', eventId: EVENT_ID, eventType: 'refund_succeeded', contentType: 'refund_details', timestamp: NOW } as const;
const BODY = serializeWebhook({ ...EVENT, object: { refund_id: 'ref_1', amount: 700, note: 'é ✓' } });

/** The headers the service sends with `body` (http-sender.ts): its two signatures, for `sentAt`. */
const signed = (body: string, { key = KEY, sentAt = NOW, eventId = EVENT_ID } = {}): Record<string, string> => ({
  'content-type': 'application/json',
  'x-webhook-signature-512': webhookSignature(body, key),
  ...standardWebhookHeaders(eventId, sentAt, body, key),
});

const secondsFromNow = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const standardSignatureOf = (headers: Record<string, string>) => headers['webhook-signature']!;

/** What verify does with a delivery: 'accepted', or the WebhookVerificationError's code. */
function outcome(
  body: string | Buffer | Uint8Array,
  headers: WebhookHeaders,
  key = KEY,
  options: Parameters<typeof webhooks.verify>[3] = { now: NOW },
): string {
  try {
    webhooks.verify(body, headers, key, options);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toBeInstanceOf(ApiError);
    // Never the key, nor what it signs: only the header at fault and the rule.
    const seen = `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack}`;
    expect(seen).not.toContain(KEY);
    expect(seen).not.toContain(webhookSignature(BODY, KEY));
    return (error as WebhookVerificationError).code;
  }
}

const ACCEPTED = 'accepted';
const INVALID = 'WEBHOOK_SIGNATURE_INVALID';
const OUT_OF_RANGE = 'WEBHOOK_TIMESTAMP_OUT_OF_RANGE';

describe('webhooks.verify', () => {
  const headers = signed(BODY);
  const otherKeyHeaders = signed(BODY, { key: 'phk_another_key' });
  const cases: [string, () => string, string][] = [
    ['the body and headers as sent', () => outcome(BODY, headers), ACCEPTED],
    ['the body as a Buffer', () => outcome(Buffer.from(BODY), headers), ACCEPTED],
    ['the body as a Uint8Array view into a larger buffer', () => outcome(new Uint8Array(Buffer.from(`xx${BODY}yy`)).subarray(2, -2), headers), ACCEPTED],
    ['fetch Headers', () => outcome(BODY, new Headers(headers)), ACCEPTED],
    [
      'header names in any case',
      () => outcome(BODY, Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]))),
      ACCEPTED,
    ],
    ['now given in milliseconds', () => outcome(BODY, headers, KEY, { now: NOW.getTime() }), ACCEPTED],
    ['signed exactly 300 s ago', () => outcome(BODY, signed(BODY, { sentAt: secondsFromNow(-300) })), ACCEPTED],
    ['signed exactly 300 s ahead', () => outcome(BODY, signed(BODY, { sentAt: secondsFromNow(300) })), ACCEPTED],
    ['signed 301 s ago', () => outcome(BODY, signed(BODY, { sentAt: secondsFromNow(-301) })), OUT_OF_RANGE],
    ['signed 301 s ahead', () => outcome(BODY, signed(BODY, { sentAt: secondsFromNow(301) })), OUT_OF_RANGE],
    ['signed 10 s ago, tolerance 10 s', () => outcome(BODY, signed(BODY, { sentAt: secondsFromNow(-10) }), KEY, { now: NOW, toleranceSeconds: 10 }), ACCEPTED],
    [
      'signed 11 s ago, tolerance 10 s',
      () => outcome(BODY, signed(BODY, { sentAt: secondsFromNow(-11) }), KEY, { now: NOW, toleranceSeconds: 10 }),
      OUT_OF_RANGE,
    ],
    [
      'several v1 signatures while the key rotates, one under this key',
      () => outcome(BODY, { ...headers, 'webhook-signature': `${standardSignatureOf(otherKeyHeaders)} ${standardSignatureOf(headers)}` }),
      ACCEPTED,
    ],
    [
      'an unknown signature version beside the v1 one',
      () => outcome(BODY, { ...headers, 'webhook-signature': `v2,${standardSignatureOf(headers).slice(3)}x ${standardSignatureOf(headers)}` }),
      ACCEPTED,
    ],
    ['the wrong key', () => outcome(BODY, headers, 'phk_another_key'), INVALID],
    ['a byte of the body changed', () => outcome(BODY.replace('700', '701'), headers), INVALID],
    ['a trailing newline', () => outcome(`${BODY}\n`, headers), INVALID],
    ['the body parsed and serialized again with other spacing', () => outcome(JSON.stringify(JSON.parse(BODY), null, 1), headers), INVALID],
    ['X-Webhook-Signature-512 missing', () => outcome(BODY, { ...headers, 'x-webhook-signature-512': undefined }), INVALID],
    [
      'X-Webhook-Signature-512 uppercased',
      () => outcome(BODY, { ...headers, 'x-webhook-signature-512': headers['x-webhook-signature-512']!.toUpperCase() }),
      INVALID,
    ],
    [
      'X-Webhook-Signature-512 with a digit changed',
      () => outcome(BODY, { ...headers, 'x-webhook-signature-512': flipHex(headers['x-webhook-signature-512']!) }),
      INVALID,
    ],
    [
      'X-Webhook-Signature-512 truncated',
      () => outcome(BODY, { ...headers, 'x-webhook-signature-512': headers['x-webhook-signature-512']!.slice(0, -2) }),
      INVALID,
    ],
    ...['', 'zz', 'sha512=abc', ' '.repeat(128)].map((value): [string, () => string, string] => [
      `X-Webhook-Signature-512 ${JSON.stringify(value)}`,
      () => outcome(BODY, { ...headers, 'x-webhook-signature-512': value }),
      INVALID,
    ]),
    [
      'X-Webhook-Signature-512 under another key',
      () => outcome(BODY, { ...headers, 'x-webhook-signature-512': otherKeyHeaders['x-webhook-signature-512'] }),
      INVALID,
    ],
    ['webhook-signature under another key', () => outcome(BODY, { ...headers, 'webhook-signature': standardSignatureOf(otherKeyHeaders) }), INVALID],
    ['webhook-signature with a character changed', () => outcome(BODY, { ...headers, 'webhook-signature': flipBase64(standardSignatureOf(headers)) }), INVALID],
    ['webhook-signature as v2 only', () => outcome(BODY, { ...headers, 'webhook-signature': standardSignatureOf(headers).replace('v1,', 'v2,') }), INVALID],
    ['webhook-signature missing', () => outcome(BODY, { ...headers, 'webhook-signature': undefined }), INVALID],
    ['webhook-id missing', () => outcome(BODY, { ...headers, 'webhook-id': undefined }), INVALID],
    ['webhook-id changed', () => outcome(BODY, { ...headers, 'webhook-id': 'evt_other' }), INVALID],
    ['webhook-timestamp missing', () => outcome(BODY, { ...headers, 'webhook-timestamp': undefined }), INVALID],
    ['webhook-timestamp not a number', () => outcome(BODY, { ...headers, 'webhook-timestamp': '1.7e9' }), INVALID],
    [
      'webhook-timestamp replaced by a fresh one (a replay)',
      () => outcome(BODY, { ...signed(BODY, { sentAt: secondsFromNow(-3600) }), 'webhook-timestamp': String(NOW.getTime() / 1000) }),
      INVALID,
    ],
    ['no headers at all', () => outcome(BODY, {}), INVALID],
  ];

  it.each(cases)('%s', (_name, run, expected) => expect(run()).toBe(expected));

  it('returns the parsed body, typed by its event_type', () => {
    const event = webhooks.verify(BODY, headers, KEY, { now: NOW });
    expect(event).toEqual(JSON.parse(BODY));
    if (event.event_type !== 'refund_succeeded') throw new Error('expected a refund_succeeded event');
    expect(event.content.type).toBe('refund_details');
    expect(event.content.object.refund_id).toBe('ref_1');
  });

  it('refuses to verify without a key, with a negative tolerance or a clock that is not a time, naming the argument', () => {
    expect(() => webhooks.verify(BODY, headers, '')).toThrow(/key must be/);
    expect(() => webhooks.verify(BODY, headers, KEY, { now: NOW, toleranceSeconds: -1 })).toThrow(/toleranceSeconds/);
    // A clock that is not a time would skip the timestamp check: a delivery signed in 1970 would pass.
    const signedIn1970 = signed(BODY, { sentAt: new Date(0) });
    for (const now of [Number.NaN, new Date('not a date'), Number.POSITIVE_INFINITY]) {
      expect(() => webhooks.verify(BODY, signedIn1970, KEY, { now })).toThrow(RangeError);
      expect(() => webhooks.verify(BODY, signedIn1970, KEY, { now })).toThrow(/now must be/);
    }
    expect(() => webhooks.verify(JSON.parse(BODY), headers, KEY, { now: NOW })).toThrow(/rawBody must be/);
  });

  it('refuses any change of the body’s bytes (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(), fc.integer({ min: 1, max: 255 }), fc.boolean(), (text, at, change, insert) => {
        const body = serializeWebhook({ ...EVENT, object: { refund_id: 'ref_1', text } });
        // The service signs the body string and sends its UTF-8 bytes.
        const sent = signed(body);
        const bytes = Buffer.from(body);
        expect(outcome(bytes, sent)).toBe(ACCEPTED);
        const position = at % bytes.length;
        const mutated = insert
          ? Buffer.concat([bytes.subarray(0, position), Buffer.from([change]), bytes.subarray(position)])
          : Buffer.from(bytes.map((byte, index) => (index === position ? byte ^ change : byte)));
        expect(outcome(mutated, sent)).toBe(INVALID);
      }),
      { numRuns: 300 },
    );
  });
});

function flipHex(hex: string): string {
  return `${hex[0] === '0' ? '1' : '0'}${hex.slice(1)}`;
}

function flipBase64(signature: string): string {
  const at = 10;
  return `${signature.slice(0, at)}${signature[at] === 'A' ? 'B' : 'A'}${signature.slice(at + 1)}`;
}
