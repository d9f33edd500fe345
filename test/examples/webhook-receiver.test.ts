// The example receiver does what the seed asks of merchants: it verifies the raw bytes, rejects a
// mismatch, acknowledges a duplicate without applying it, and never lets an older payment state win.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createReceiver } from '../../examples/webhook-receiver/receiver.ts';
import { serializeWebhook, webhookSignature } from '../../src/domain/events/webhook.ts';
import { UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { settlingPayment } from '../support/webhooks.ts';

const KEY = 'phk_example_receiver_key';

async function listen(key: string) {
  const receiver = createReceiver(key);
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/`;
  return { ...receiver, url, close: () => new Promise((resolve) => receiver.server.close(resolve)) };
}

const paymentWebhook = (eventId: string, status: string, updated: string, version: number) =>
  serializeWebhook({
    merchantId: 'mer_1',
    eventId,
    eventType: status === 'succeeded' ? 'payment_succeeded' : 'payment_processing',
    contentType: 'payment_details',
    object: { payment_id: 'pay_1', status, updated, version },
    timestamp: new Date(updated),
  });

describe('the example receiver, on its own', () => {
  let receiver: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    receiver = await listen(KEY);
  });
  afterAll(() => receiver.close());

  const post = (body: string, signature: string | null = webhookSignature(body, KEY)) =>
    fetch(receiver.url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-webhook-signature-512': signature }) } });

  it('rejects a missing or wrong signature, and a body changed after signing, applying nothing', async () => {
    const body = paymentWebhook('evt_bad', 'succeeded', '2026-11-23T10:00:00.000Z', 3);
    expect((await post(body, null)).status).toBe(401);
    expect((await post(body, webhookSignature(body, 'another key'))).status).toBe(401);
    expect((await post(body.replace('"version":3', '"version": 3'), webhookSignature(body, KEY))).status).toBe(401);
    expect(receiver.state.processedEvents.size).toBe(0);
    expect(receiver.state.payments.size).toBe(0);
  });

  it('applies a newer state, acknowledges a duplicate without applying it, and ignores an older state', async () => {
    expect((await post(paymentWebhook('evt_2', 'succeeded', '2026-11-23T10:00:02.000Z', 2))).status).toBe(200);
    expect(receiver.state.payments.get('pay_1')).toEqual({ status: 'succeeded', updated: '2026-11-23T10:00:02.000Z', version: 2 });
    // Delivered late: an older state must not overwrite the newer one.
    expect((await post(paymentWebhook('evt_1', 'processing', '2026-11-23T10:00:01.000Z', 1))).status).toBe(200);
    expect(receiver.state.payments.get('pay_1')?.status).toBe('succeeded');
    // A duplicate of a processed event (a retry) is acknowledged and not applied again.
    const duplicate = paymentWebhook('evt_1', 'processing', '2026-11-23T10:00:09.000Z', 9);
    const answer = await post(duplicate);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toMatch(/duplicate/);
    expect(receiver.state.payments.get('pay_1')?.status).toBe('succeeded');
    expect([...receiver.state.processedEvents]).toEqual(['evt_2', 'evt_1']);
  });
});

describe('the example receiver, behind the real service', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ sandboxBankDebitSettleMs: 200 });
  });
  afterAll(() => stack.close());

  it('ends with the payment’s final state, whatever order its events arrive in', async () => {
    const shop = await merchantWithSandbox(stack);
    const receiver = await listen(shop.paymentResponseHashKey);
    try {
      dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: receiver.url } }));
      // A bank debit: payment_processing while it settles, then payment_succeeded.
      const payment = await settlingPayment(shop);
      await vi.waitFor(() => expect(receiver.state.processedEvents.size).toBe(2), { timeout: 15_000 });
      expect(receiver.state.payments.get(payment.id)).toMatchObject({ status: 'succeeded', version: expect.any(Number) });
      expect(receiver.state.payments.get(payment.id)!.version).toBeGreaterThan(payment.version);
    } finally {
      await receiver.close();
    }
  });
});
