// The event catalog, the wire body, its signatures and the retry schedule, pinned to the seed's tables
// (sections 2, 5, 6 and 8): a change here is a change of what every merchant's receiver sees.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONTENT_TYPES, contentTypeOf, EVENT_TYPES, isEventType, PAYMENT_STATUS_EVENTS } from '../../src/modules/events/catalog.ts';
import { MAX_ATTEMPTS, MAX_RETRIES, RETRY_DELAYS_MS, retryDelayMs } from '../../src/modules/events/retry-schedule.ts';
import { serializeWebhook, standardWebhookHeaders, webhookSignature } from '../../src/modules/events/signature.ts';
import { INTENT_STATUSES } from '../../src/modules/payments/machine/statuses.ts';

/** The seed's section 6 table, group by group, as written there. */
const SEED_EVENTS = {
  payment_details: [
    'payment_succeeded',
    'payment_failed',
    'payment_processing',
    'payment_cancelled',
    'payment_cancelled_post_capture',
    'payment_authorized',
    'payment_partially_authorized',
    'payment_captured',
    'payment_expired',
    'action_required',
    'surcharge_payment_succeeded',
  ],
  refund_details: ['refund_succeeded', 'refund_failed', 'refund_review', 'surcharge_refund_succeeded'],
  dispute_details: ['dispute_opened', 'dispute_expired', 'dispute_accepted', 'dispute_cancelled', 'dispute_challenged', 'dispute_won', 'dispute_lost'],
  mandate_details: ['mandate_active', 'mandate_revoked'],
  payout_details: [
    'payout_success',
    'payout_failed',
    'payout_initiated',
    'payout_processing',
    'payout_cancelled',
    'payout_expired',
    'payout_reversed',
    'payout_not_permitted',
  ],
  subscription_details: ['invoice_paid'],
} as const;

describe('the event catalog', () => {
  it('has the seed’s 33 event types, each once', () => {
    expect(EVENT_TYPES).toHaveLength(33);
    expect(new Set(EVENT_TYPES).size).toBe(33);
    expect([...EVENT_TYPES].sort()).toEqual(Object.values(SEED_EVENTS).flat().sort());
  });

  it('has the seed’s 6 content types', () => {
    expect([...CONTENT_TYPES].sort()).toEqual(Object.keys(SEED_EVENTS).sort());
  });

  it.each(Object.entries(SEED_EVENTS).flatMap(([contentType, events]) => events.map((eventType) => ({ eventType, contentType }))))(
    '$eventType carries $contentType',
    ({ eventType, contentType }) => {
      expect(contentTypeOf(eventType)).toBe(contentType);
    },
  );

  it('recognises event types and nothing else', () => {
    for (const eventType of EVENT_TYPES) expect(isEventType(eventType)).toBe(true);
    for (const other of ['PAYMENT_SUCCEEDED', 'payment_success', '', 'refund_review ', 'toString']) expect(isEventType(other)).toBe(false);
  });

  // Hyperswitch's From<IntentStatus> for Option<EventType>, restricted to our statuses.
  const EXPECTED_PAYMENT_EVENTS = {
    REQUIRES_PAYMENT_METHOD: null,
    REQUIRES_CONFIRMATION: null,
    PROCESSING: 'payment_processing',
    REQUIRES_CUSTOMER_ACTION: 'action_required',
    REQUIRES_CAPTURE: 'payment_authorized',
    SUCCEEDED: 'payment_succeeded',
    FAILED: 'payment_failed',
    CANCELLED: 'payment_cancelled',
    PARTIALLY_CAPTURED: 'payment_captured',
    EXPIRED: 'payment_expired',
    PARTIALLY_AUTHORIZED: 'payment_partially_authorized',
    CANCELLED_POST_CAPTURE: 'payment_cancelled_post_capture',
  } as const;

  it.each(INTENT_STATUSES.map((status) => ({ status, event: EXPECTED_PAYMENT_EVENTS[status] })))(
    'a payment reaching $status emits $event',
    ({ status, event }) => {
      expect(PAYMENT_STATUS_EVENTS[status]).toBe(event);
    },
  );

  it('maps every payment status (no status forgotten)', () => {
    expect(Object.keys(PAYMENT_STATUS_EVENTS).sort()).toEqual([...INTENT_STATUSES].sort());
  });
});

const webhook = {
  merchantId: 'mer_Shop1',
  eventId: 'evt_Stable1',
  eventType: 'payment_succeeded' as const,
  contentType: 'payment_details' as const,
  object: { payment_id: 'pay_1', status: 'succeeded', amount: 1000, note: 'café ✓ "quoted"' },
  timestamp: new Date('2026-11-23T10:11:12.345Z'),
};

describe('the outgoing webhook body', () => {
  it('has exactly the seed’s six fields, in its order', () => {
    const body = serializeWebhook(webhook);
    expect(Object.keys(JSON.parse(body))).toEqual(['merchant_id', 'event_id', 'event_type', 'content', 'timestamp', 'processor_merchant_id']);
    expect(JSON.parse(body)).toEqual({
      merchant_id: 'mer_Shop1',
      event_id: 'evt_Stable1',
      event_type: 'payment_succeeded',
      content: { type: 'payment_details', object: webhook.object },
      timestamp: '2026-11-23T10:11:12.345Z',
      processor_merchant_id: null,
    });
    expect(Object.keys(JSON.parse(body).content)).toEqual(['type', 'object']);
  });

  it('serializes the same webhook to the same bytes', () => {
    expect(serializeWebhook(webhook)).toBe(serializeWebhook({ ...webhook, object: { ...webhook.object } }));
  });
});

describe('the seed’s signature, X-Webhook-Signature-512', () => {
  const key = 'phk_0123456789abcdefABCDEF';

  it('is the lowercase hex HMAC-SHA512 that openssl computes over the same bytes', () => {
    const body = serializeWebhook(webhook);
    const openssl = execFileSync('openssl', ['dgst', '-sha512', '-hmac', key, '-r'], { input: Buffer.from(body, 'utf8') })
      .toString()
      .split(' ')[0];
    expect(webhookSignature(body, key)).toBe(openssl);
    expect(webhookSignature(body, key)).toMatch(/^[0-9a-f]{128}$/);
  });

  it('changes with any byte of the body, and with the key', () => {
    const body = serializeWebhook(webhook);
    const signature = webhookSignature(body, key);
    // Re-serialized JSON with other spacing is other bytes: the seed's first signature failure cause.
    expect(webhookSignature(JSON.stringify(JSON.parse(body), null, 1), key)).not.toBe(signature);
    expect(webhookSignature(body.replace('1000', '1001'), key)).not.toBe(signature);
    expect(webhookSignature(body, `${key}x`)).not.toBe(signature);
  });
});

describe('the Standard Webhooks headers', () => {
  it('sign "id.timestamp.body" with HMAC-SHA256 in base64, as the specification says', () => {
    const body = serializeWebhook(webhook);
    const sentAt = new Date('2026-11-23T10:11:13.999Z');
    const headers = standardWebhookHeaders('evt_Stable1', sentAt, body, 'the key');
    const expected = createHmac('sha256', Buffer.from('the key', 'utf8'))
      .update(`evt_Stable1.${Math.floor(sentAt.getTime() / 1000)}.${body}`)
      .digest('base64');
    expect(headers).toEqual({ 'webhook-id': 'evt_Stable1', 'webhook-timestamp': '1795428673', 'webhook-signature': `v1,${expected}` });
  });
});

const MINUTE = 60_000;
/** The seed's table, row by row: retries 1, 2–3, 4–8, 9–13, 14–16. */
const SEED_SCHEDULE = [
  { retries: [1], minutes: 1 },
  { retries: [2, 3], minutes: 5 },
  { retries: [4, 5, 6, 7, 8], minutes: 10 },
  { retries: [9, 10, 11, 12, 13], minutes: 60 },
  { retries: [14, 15, 16], minutes: 360 },
];
const SEED_DELAYS = SEED_SCHEDULE.flatMap(({ retries, minutes }) => retries.map((retry) => ({ retry, delayMs: minutes * MINUTE })));

describe('the webhook retry schedule', () => {
  it('is 16 retries, 17 attempts, 1441 minutes', () => {
    expect(MAX_RETRIES).toBe(16);
    expect(MAX_ATTEMPTS).toBe(17);
    expect(RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0)).toBe(1441 * MINUTE);
  });

  it.each(SEED_DELAYS)('retry $retry comes $delayMs ms after the attempt before it', ({ retry, delayMs }) => {
    // Retry n follows failed attempt n (attempt 1 is the original).
    expect(retryDelayMs(retry, 1)).toBe(delayMs);
    expect(RETRY_DELAYS_MS[retry - 1]).toBe(delayMs);
  });

  it.each(SEED_DELAYS)('retry $retry is scaled by WEBHOOK_RETRY_DELAY_SCALE', ({ retry, delayMs }) => {
    expect(retryDelayMs(retry, 0.001)).toBe(delayMs / 1000);
    expect(retryDelayMs(retry, 0.0001)).toBe(delayMs / 10_000);
  });

  it('has no retry after the 17th attempt', () => {
    expect(retryDelayMs(17, 1)).toBeNull();
    expect(retryDelayMs(40, 0.001)).toBeNull();
  });

  it('stretches to a Retry-After within [delay, 2 × delay], never shorter and never past double', () => {
    expect(retryDelayMs(1, 1, 90_000)).toBe(90_000);
    expect(retryDelayMs(1, 1, 10_000)).toBe(MINUTE); // asks for sooner: the schedule stands
    expect(retryDelayMs(1, 1, 0)).toBe(MINUTE);
    expect(retryDelayMs(1, 1, 10 * MINUTE)).toBe(2 * MINUTE); // asks for much later: at most double
    expect(retryDelayMs(14, 0.001, 1_000_000)).toBe(2 * 360 * 60);
  });
});
