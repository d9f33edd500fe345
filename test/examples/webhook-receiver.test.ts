// The example receiver does what the seed asks of merchants: it verifies the raw bytes, rejects a
// mismatch and a replayed old delivery, acknowledges a duplicate without applying it, and never lets an older payment state win.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createReceiver } from '../../examples/webhook-receiver/receiver.ts';
import { serializeWebhook, standardWebhookHeaders, webhookSignature } from '../../src/modules/events/signature.ts';
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

  interface Sending {
    /** X-Webhook-Signature-512 (null: none). */
    signature?: string | null;
    sentAt?: Date;
    /** The Standard Webhooks headers, signed for `sentAt` unless given. */
    standardHeaders?: Record<string, string>;
  }

  /** Sends `body` as the service would: both signatures, the Standard Webhooks one over the timestamp. */
  const post = (body: string, { signature = webhookSignature(body, KEY), sentAt = new Date(), standardHeaders }: Sending = {}) =>
    fetch(receiver.url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        ...(standardHeaders ?? standardWebhookHeaders(JSON.parse(body).event_id, sentAt, body, KEY)),
        ...(signature === null ? {} : { 'x-webhook-signature-512': signature }),
      },
    });

  it('rejects a missing or wrong signature, and a body changed after signing, applying nothing', async () => {
    const body = paymentWebhook('evt_bad', 'succeeded', '2026-11-23T10:00:00.000Z', 3);
    expect((await post(body, { signature: null })).status).toBe(401);
    expect((await post(body, { signature: webhookSignature(body, 'another key') })).status).toBe(401);
    expect((await post(body.replace('"version":3', '"version": 3'), { signature: webhookSignature(body, KEY) })).status).toBe(401);
    expect(receiver.state.processedEvents.size).toBe(0);
    expect(receiver.state.payments.size).toBe(0);
  });

  it('refuses a delivery replayed outside the 5-minute timestamp tolerance, or with a timestamp changed after signing, applying nothing', async () => {
    const body = paymentWebhook('evt_replayed', 'succeeded', '2026-11-23T10:00:00.000Z', 3);
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    for (const sentAt of [minutesAgo(6), minutesAgo(-6)]) {
      const answer = await post(body, { sentAt });
      expect(answer.status).toBe(401);
      expect(await answer.text()).toMatch(/webhook-timestamp/);
    }
    // A captured old delivery with a fresh timestamp pasted in: the signature no longer matches.
    const captured = standardWebhookHeaders('evt_replayed', minutesAgo(60), body, KEY);
    expect((await post(body, { standardHeaders: { ...captured, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) } })).status).toBe(401);
    const { 'webhook-timestamp': _timestamp, ...withoutTimestamp } = standardWebhookHeaders('evt_replayed', new Date(), body, KEY);
    expect((await post(body, { standardHeaders: withoutTimestamp })).status).toBe(401);
    expect(receiver.state.processedEvents.size).toBe(0);
    // Within the tolerance (a sender's clock a little off, a retry's queueing): accepted.
    expect((await post(body, { sentAt: minutesAgo(4) })).status).toBe(200);
    receiver.state.processedEvents.clear();
    receiver.state.payments.clear();
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

it('listens on RECEIVER_PORT, its own variable, not on the PORT the service in the same shell uses', async () => {
  const service = createServer().listen(0, '127.0.0.1');
  await once(service, 'listening');
  const servicePort = (service.address() as AddressInfo).port;
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/webhook-receiver/receiver.ts'], {
    env: { PATH: process.env.PATH ?? '', WEBHOOK_KEY: KEY, PORT: String(servicePort), RECEIVER_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const [, port] = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(line.toString())!;
    expect(Number(port)).not.toBe(servicePort);
    expect((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })).status).toBe(401);
  } finally {
    child.kill();
    service.close();
  }
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
