// rotateWebhookSigningKey (docs/webhooks.md, "Rotating the signing key"): real deliveries through the worker to a
// real receiver, checked as openssl computes HMAC-SHA512 and by the server SDK's verify with each key. During
// the overlap both keys sign; after it (its expiry set in the past in the database, never waited for) only the new one.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { standardWebhookHeaders, webhookSignature } from '../../src/modules/events/signature.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// This worktree's SDK source (the package name resolves through the shared node_modules).
import { webhooks } from '../../packages/node/src/index.ts';
import { EventDeliveryHeadersDocument, RotateWebhookSigningKeyDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import type { ReceivedRequest } from '../support/receiver.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { eventReaching, paidPayment, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack();
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

const openssl512 = (key: string, body: Buffer) => execFileSync('openssl', ['dgst', '-sha512', '-hmac', key, '-r'], { input: body }).toString().split(' ')[0];
const standard = (key: string, id: string, timestamp: string, body: Buffer | string) =>
  `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
const verifies = (request: ReceivedRequest, key: string) => {
  try {
    webhooks.verify(request.body, request.headers as Record<string, string>, key);
    return true;
  } catch {
    return false;
  }
};

/** A paid payment's payment_succeeded delivery, as the receiver got it. */
async function deliveredPayment(shop: Shop) {
  const payment = await paidPayment(shop);
  const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
  const request = shop.receiver.received.find((received) => received.body.toString().includes(`"event_id":"${event.id}"`))!;
  return { event, request };
}

describe('rotateWebhookSigningKey', () => {
  it.each([
    { overlapSeconds: -1, rule: 'must be at least 0' },
    { overlapSeconds: 7 * 24 * 3600 + 1, rule: 'must be at most 604800 (7 days)' },
  ])('refuses overlapSeconds $overlapSeconds: $rule', async ({ overlapSeconds, rule }) => {
    const shop = await shopWithReceiver(stack);
    const error = errorOf(await shop.secret(RotateWebhookSigningKeyDocument, { input: { profileId: shop.profileId, overlapSeconds } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('overlapSeconds');
    expect(error.message).toContain(rule);
  });

  it('signs with both keys during the overlap (new first), and with the new key only after it', async () => {
    const shop = await shopWithReceiver(stack);
    const oldKey = shop.paymentResponseHashKey;
    const before = Date.now();
    const rotated = dataOf(await shop.secret(RotateWebhookSigningKeyDocument, { input: { profileId: shop.profileId } })).rotateWebhookSigningKey;
    const newKey = rotated.paymentResponseHashKey;
    expect(rotated.mode).toBe('TEST');
    expect(newKey).toMatch(/^[0-9a-f]{64}$/);
    expect(newKey).not.toBe(oldKey);
    const { previousWebhookSigningKeyExpiresAt, webhookSigningKeyRotatedAt } = rotated.businessProfile;
    expect(new Date(previousWebhookSigningKeyExpiresAt!).getTime() - new Date(webhookSigningKeyRotatedAt!).getTime()).toBe(24 * 3600 * 1000);
    expect(new Date(webhookSigningKeyRotatedAt!).getTime()).toBeGreaterThanOrEqual(before - 1000);

    const during = await deliveredPayment(shop);
    const { 'webhook-id': id, 'webhook-timestamp': timestamp } = during.request.headers as Record<string, string>;
    expect(during.request.headers['x-webhook-signature-512']).toBe(openssl512(newKey, during.request.body));
    expect(during.request.headers['x-webhook-signature-512-previous']).toBe(openssl512(oldKey, during.request.body));
    expect(during.request.headers['webhook-signature']).toBe(
      `${standard(newKey, id!, timestamp!, during.request.body)} ${standard(oldKey, id!, timestamp!, during.request.body)}`,
    );
    expect([verifies(during.request, newKey), verifies(during.request, oldKey), verifies(during.request, 'f'.repeat(64))]).toEqual([true, true, false]);
    // What `payments listen` forwards is what was sent: the same headers, both keys signing.
    const forwarded = dataOf(await shop.secret(EventDeliveryHeadersDocument, { id: during.event.id })).event!.deliveryHeaders;
    const headers = Object.fromEntries(forwarded.map(({ name, value }) => [name, value]));
    expect(Object.keys(headers).sort()).toEqual(
      Object.keys(during.request.headers)
        .filter((name) => name in headers)
        .sort(),
    );
    expect(headers['x-webhook-signature-512-previous']).toBe(openssl512(oldKey, during.request.body));
    expect(headers['webhook-signature']).toBe(
      `${standard(newKey, id!, headers['webhook-timestamp']!, during.request.body)} ${standard(oldKey, id!, headers['webhook-timestamp']!, during.request.body)}`,
    );

    // The overlap ends.
    await sql.query(`UPDATE business_profiles SET test_previous_payment_response_hash_key_expires_at = now() - interval '1 second' WHERE id = $1`, [
      shop.profileId,
    ]);
    const after = await deliveredPayment(shop);
    expect(after.request.headers['x-webhook-signature-512']).toBe(openssl512(newKey, after.request.body));
    expect(after.request.headers['x-webhook-signature-512-previous']).toBeUndefined();
    const afterHeaders = after.request.headers as Record<string, string>;
    expect(afterHeaders['webhook-signature']).toBe(standard(newKey, afterHeaders['webhook-id']!, afterHeaders['webhook-timestamp']!, after.request.body));
    expect([verifies(after.request, newKey), verifies(after.request, oldKey)]).toEqual([true, false]);
  });

  it('with overlapSeconds 0 replaces the key at once; a key set by updateBusinessProfile ends an overlap', async () => {
    const shop = await shopWithReceiver(stack);
    const at0 = dataOf(await shop.secret(RotateWebhookSigningKeyDocument, { input: { profileId: shop.profileId, overlapSeconds: 0 } })).rotateWebhookSigningKey;
    expect(at0.businessProfile.previousWebhookSigningKeyExpiresAt).toBeNull();
    const first = await deliveredPayment(shop);
    expect(first.request.headers['x-webhook-signature-512-previous']).toBeUndefined();
    expect([verifies(first.request, at0.paymentResponseHashKey), verifies(first.request, shop.paymentResponseHashKey)]).toEqual([true, false]);

    dataOf(await shop.secret(RotateWebhookSigningKeyDocument, { input: { profileId: shop.profileId, overlapSeconds: 3600 } }));
    const own = 'k'.repeat(40);
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, paymentResponseHashKey: own } }));
    const second = await deliveredPayment(shop);
    expect(second.request.headers['x-webhook-signature-512-previous']).toBeUndefined();
    expect([verifies(second.request, own), verifies(second.request, at0.paymentResponseHashKey)]).toEqual([true, false]);
  });

  it('rotates live keys with a live key only, and only the merchant’s own profiles', async () => {
    const shop = await shopWithReceiver(stack);
    const other = await shopWithReceiver(stack);
    errorOf(await shop.secret(RotateWebhookSigningKeyDocument, { input: { profileId: shop.profileId, mode: 'LIVE' } }), 'FORBIDDEN');
    errorOf(await shop.secret(RotateWebhookSigningKeyDocument, { input: { profileId: other.profileId } }), 'NOT_FOUND');
    const { rows } = await sql.query(
      'SELECT test_webhook_signing_key_rotated_at, live_webhook_signing_key_rotated_at FROM business_profiles WHERE id = ANY($1)',
      [[shop.profileId, other.profileId]],
    );
    expect(rows.flatMap((row) => [row.test_webhook_signing_key_rotated_at, row.live_webhook_signing_key_rotated_at])).toEqual([null, null, null, null]);
  });
});

describe('the SDK’s verify during a rotation', () => {
  const body = '{"event_id":"evt_1"}';
  const [NEW, OLD, OTHER] = ['n'.repeat(64), 'o'.repeat(64), 'x'.repeat(64)];
  const sent = (previousDigest: string | null) => ({
    'x-webhook-signature-512': webhookSignature(body, NEW),
    ...(previousDigest === null ? {} : { 'x-webhook-signature-512-previous': previousDigest }),
    ...standardWebhookHeaders('evt_1', new Date(), body, previousDigest === null ? [NEW] : [NEW, OLD]),
  });
  it.each([
    { key: NEW, previous: webhookSignature(body, OLD), accepted: true },
    { key: OLD, previous: webhookSignature(body, OLD), accepted: true },
    { key: OTHER, previous: webhookSignature(body, OLD), accepted: false },
    { key: OLD, previous: null, accepted: false },
    { key: NEW, previous: 'not hex', accepted: false },
  ])('key $key with -Previous $previous: accepted $accepted', ({ key, previous, accepted }) => {
    expect(verifies({ body: Buffer.from(body), headers: sent(previous) } as unknown as ReceivedRequest, key)).toBe(accepted);
  });
});
