// Outgoing webhooks end to end: real payments through the sandbox processor, the real worker and Redis,
// and a real HTTP receiver that records the bytes it got.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { RETRY_DELAYS_MS } from '../../src/modules/events/retry-schedule.ts';
import {
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  EventDocument,
  EventsDocument,
  PaymentDocument,
  RetryWebhookDeliveryDocument,
  SendTestWebhookDocument,
  SyncPaymentDocument,
  UpdateBusinessProfileDocument,
} from '../gql/graphql.ts';
import { startTestApi } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { answer, startReceiver } from '../support/receiver.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { card, declinedPayment, eventReaching, eventsOf, paidPayment, shopWithReceiver } from '../support/webhooks.ts';

const RETRY_DELAY_SCALE = 0.0001; // testEnv's WEBHOOK_RETRY_DELAY_SCALE

let stack: Stack;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack({ sandboxBankDebitSettleMs: 300 });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

describe('a payment’s events reach the merchant', () => {
  it('as the seed’s body, signed over the exact bytes (as openssl computes it), with Standard Webhooks headers', async () => {
    const shop = await shopWithReceiver(stack);
    const payment = await paidPayment(shop);
    expect(payment.status).toBe('SUCCEEDED');
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    const request = shop.receiver.received.find((received) => received.body.toString().includes(`"event_id":"${event.id}"`))!;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    // The bytes sent are the bytes stored.
    expect(request.body.toString('utf8')).toBe(event.body);
    const openssl = execFileSync('openssl', ['dgst', '-sha512', '-hmac', shop.paymentResponseHashKey, '-r'], { input: request.body }).toString().split(' ')[0];
    expect(request.headers['x-webhook-signature-512']).toBe(openssl);
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature } = request.headers;
    expect(id).toBe(event.id);
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    const expected = createHmac('sha256', shop.paymentResponseHashKey).update(`${id}.${timestamp}.`).update(request.body).digest('base64');
    expect(signature).toBe(`v1,${expected}`);

    const body = JSON.parse(request.body.toString('utf8'));
    expect(Object.keys(body)).toEqual(['merchant_id', 'event_id', 'event_type', 'content', 'timestamp', 'processor_merchant_id']);
    expect(body).toMatchObject({ merchant_id: shop.merchantId, event_id: event.id, event_type: 'payment_succeeded', content: { type: 'payment_details' } });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    const read = dataOf(await shop.secret(PaymentDocument, { id: payment.id })).payment!;
    expect(body.content.object).toMatchObject({
      payment_id: payment.id,
      status: 'succeeded',
      amount: 1250,
      currency: 'USD',
      amount_received: 1250,
      connector: 'sandbox',
      updated: read.updated,
      version: read.version,
      active_attempt: { status: 'charged', card: { last4: '4242' } },
    });
    // Never the card number or CVC.
    expect(request.body.toString()).not.toContain('4242424242424242');
    expect(event.attempts).toEqual([expect.objectContaining({ attemptNumber: 1, kind: 'INITIAL', responseStatus: 204, error: null, url: shop.receiver.url })]);
    expect(event.attempts[0]!.requestHeaders).toMatchObject({ 'x-webhook-signature-512': openssl, 'webhook-id': event.id });
  });

  it('stores a receiver’s binary answer (NUL bytes and all) and counts its 2xx', async () => {
    const shop = await shopWithReceiver(stack, await startReceiver(answer(200, 'ok\u0000\u0001binary')));
    const payment = await paidPayment(shop);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(event.attempts).toEqual([expect.objectContaining({ responseStatus: 200, responseBody: 'ok\uFFFD\u0001binary' })]);
    await shop.receiver.close();
  });

  it('a card payment answered at once sends one webhook, payment_succeeded: the pending state before the processor call is not news', async () => {
    const shop = await shopWithReceiver(stack);
    const payment = await paidPayment(shop);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(event.objectVersion).toBe(payment.version);
    // PROCESSING was committed before the processor was called (the history says so), without an event.
    const { history } = dataOf(await shop.secret(PaymentDocument, { id: payment.id })).payment!;
    expect(history.filter((row) => row.subject === 'intent').map((row) => row.toStatus)).toEqual([
      'REQUIRES_PAYMENT_METHOD',
      'REQUIRES_CONFIRMATION',
      'PROCESSING',
      'SUCCEEDED',
    ]);
    // The worker would have sent anything else by now (it sends on commit); give it the time anyway.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await eventsOf(shop, payment.id)).map((row) => row.eventType)).toEqual(['PAYMENT_SUCCEEDED']);
    expect(shop.receiver.bodies().map((body) => body.event_type)).toEqual(['payment_succeeded']);
  });

  it('a capture answered at once sends payment_succeeded alone after payment_authorized', async () => {
    const shop = await shopWithReceiver(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    const captured = dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id } })).capturePayment;
    expect(captured.status).toBe('SUCCEEDED');
    await eventReaching(shop, created.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await eventsOf(shop, created.id)).map((row) => row.eventType)).toEqual(['PAYMENT_SUCCEEDED', 'PAYMENT_AUTHORIZED']);
  });

  it('a processor that answers pending (a bank debit settling) sends payment_processing, then the final event once', async () => {
    const shop = await shopWithReceiver(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'EUR' } })).createPayment;
    const debit = { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } };
    const confirmed = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: debit } }),
    ).confirmPayment;
    expect(confirmed.status).toBe('PROCESSING');
    const processing = await eventReaching(shop, created.id, 'PAYMENT_PROCESSING', 'DELIVERED');
    expect(processing.objectVersion).toBe(confirmed.version);
    await eventReaching(shop, created.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await eventsOf(shop, created.id)).map((row) => row.eventType)).toEqual(['PAYMENT_SUCCEEDED', 'PAYMENT_PROCESSING']);
  });

  it('a declined card sends payment_failed', async () => {
    const shop = await shopWithReceiver(stack);
    const paymentId = await declinedPayment(shop);
    const event = await eventReaching(shop, paymentId, 'PAYMENT_FAILED', 'DELIVERED');
    expect(JSON.parse(event.body).content.object).toMatchObject({ status: 'failed', error_code: expect.any(String) });
  });

  it('one event for a transition that several syncs report at once', async () => {
    const shop = await shopWithReceiver(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'EUR' } })).createPayment;
    const confirmed = dataOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: created.clientSecret, paymentMethodData: { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } } },
      }),
    ).confirmPayment;
    expect(confirmed.status).toBe('PROCESSING');
    await new Promise((resolve) => setTimeout(resolve, 400)); // the sandbox settles the debit after 300 ms
    const syncs = await Promise.all(Array.from({ length: 6 }, () => shop.secret(SyncPaymentDocument, { input: { paymentId: created.id } })));
    // Each reports the settled debit (one moves the payment; the others find it moved), or, on a loaded
    // machine, a read that came first; at least one of them moved it.
    const reported = syncs.map((sync) => dataOf(sync).syncPayment.status);
    expect(reported).toContain('SUCCEEDED');
    for (const status of reported) expect(['PROCESSING', 'SUCCEEDED']).toContain(status);
    await eventReaching(shop, created.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    // The scheduled sync of the worker may run too; give it the time to, then count.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await eventsOf(shop, created.id)).map((event) => event.eventType)).toEqual(['PAYMENT_SUCCEEDED', 'PAYMENT_PROCESSING']);
    const succeeded = shop.receiver.bodies().filter((body) => body.event_type === 'payment_succeeded');
    expect(succeeded).toHaveLength(1);
  });

  it('sends a test-mode event only to the test URL: a profile with a live URL alone records it NOT_SENT', async () => {
    const receiver = await startReceiver();
    const shop = await merchantWithSandbox(stack);
    // Written directly: the API takes a live URL only on an allowlisted https host.
    await sql.query('UPDATE business_profiles SET live_webhook_url = $1 WHERE id = $2', [receiver.url, shop.profileId]);
    const payment = await paidPayment(shop);
    // Recorded NOT_SENT when written, with no attempt: not PENDING for the worker to find no URL and close.
    expect((await eventsOf(shop, payment.id)).map((event) => [event.eventType, event.deliveryStatus, event.nextAttemptAt, event.attempts.length])).toEqual([
      ['PAYMENT_SUCCEEDED', 'NOT_SENT', null, 0],
    ]);
    // And a disabled test endpoint is not sent to either, whatever the live one is.
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: receiver.url } }));
    await sql.query('UPDATE business_profiles SET test_webhook_disabled_at = now() WHERE id = $1', [shop.profileId]);
    const later = await paidPayment(shop);
    expect((await eventsOf(shop, later.id)).map((event) => event.deliveryStatus)).toEqual(['NOT_SENT']);
    expect(receiver.received).toHaveLength(0);
    await receiver.close();
  });

  it('records an event without sending it when the profile has no URL for the mode', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = await paidPayment(shop);
    const events = await eventsOf(shop, payment.id);
    expect(events.map((event) => [event.eventType, event.deliveryStatus, event.attempts.length, event.nextAttemptAt])).toEqual([
      ['PAYMENT_SUCCEEDED', 'NOT_SENT', 0, null],
    ]);
    const { rows } = await sql.query('SELECT count(*)::int AS count FROM events WHERE object_id = $1', [payment.id]);
    expect(rows[0].count).toBe(1);
  });
});

describe('a receiver that keeps failing', () => {
  it('gets exactly 17 attempts, spaced by the seed’s table (scaled), then the event is FAILED and can be sent by hand', async () => {
    const receiver = await startReceiver(answer(503, 'down for maintenance'));
    const shop = await shopWithReceiver(stack, receiver);
    const payment = await paidPayment(shop);
    const failed = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'FAILED', 25_000);
    // Wait a little longer than the last delay: an 18th automatic attempt must not come.
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS.at(-1)! * RETRY_DELAY_SCALE + 500));

    const attempts = receiver.received.filter((request) => request.body.toString() === failed.body);
    expect(attempts).toHaveLength(17);
    // As the receiver saw them: each gap is the table's delay, give or take the moments between an
    // attempt's start and its arrival (a few ms) and a loaded machine's lateness.
    for (const [index, delay] of RETRY_DELAYS_MS.entries()) {
      const gap = attempts[index + 1]!.at - attempts[index]!.at;
      const scaled = delay * RETRY_DELAY_SCALE;
      expect(gap, `gap before retry ${index + 1}`).toBeGreaterThanOrEqual(scaled - 50);
      expect(gap, `gap before retry ${index + 1}`).toBeLessThan(scaled + 3_000);
    }
    // The same bytes and the same seed signature every time.
    expect(new Set(attempts.map((request) => request.headers['x-webhook-signature-512'])).size).toBe(1);

    const read = dataOf(await shop.secret(EventDocument, { id: failed.id })).event!;
    expect(read).toMatchObject({ deliveryStatus: 'FAILED', attemptCount: 17, nextAttemptAt: null, deliveredAt: null });
    expect(read.attempts.map((attempt) => [attempt.attemptNumber, attempt.kind, attempt.responseStatus, attempt.responseBody])).toEqual(
      Array.from({ length: 17 }, (_, index) => [index + 1, index === 0 ? 'INITIAL' : 'AUTOMATIC_RETRY', 503, 'down for maintenance']),
    );
    // As the worker recorded them: each attempt starts no sooner than the table's delay after the one
    // before started (the seed: "1 minute after the original attempt"), to the millisecond.
    for (const [index, delay] of RETRY_DELAYS_MS.entries()) {
      const gap = Date.parse(read.attempts[index + 1]!.startedAt) - Date.parse(read.attempts[index]!.startedAt);
      expect(gap, `retry ${index + 1} started after`).toBeGreaterThanOrEqual(Math.round(delay * RETRY_DELAY_SCALE));
      expect(gap, `retry ${index + 1} started after`).toBeLessThan(Math.round(delay * RETRY_DELAY_SCALE) + 3_000);
    }

    receiver.handler = answer(200);
    const retried = dataOf(await shop.secret(RetryWebhookDeliveryDocument, { input: { eventId: failed.id } })).retryWebhookDelivery;
    expect(retried).toMatchObject({ deliveryStatus: 'DELIVERED', attemptCount: 18 });
    expect(retried.attempts.at(-1)).toMatchObject({ attemptNumber: 18, kind: 'MANUAL_RETRY', responseStatus: 200 });
    expect(receiver.received.at(-1)!.body.toString()).toBe(failed.body);
    await receiver.close();
  }, 60_000);

  it('is retried after a failure and delivered when it recovers; a manual retry also reaches a delivered event', async () => {
    const receiver = await startReceiver((_request, reply, index) => reply.writeHead(index === 0 ? 500 : 200).end());
    const shop = await shopWithReceiver(stack, receiver);
    const payment = await paidPayment(shop);
    const delivered = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(delivered.attempts.map((attempt) => [attempt.kind, attempt.responseStatus])).toEqual([
      ['INITIAL', 500],
      ['AUTOMATIC_RETRY', 200],
    ]);
    const again = dataOf(await shop.secret(RetryWebhookDeliveryDocument, { input: { eventId: delivered.id } })).retryWebhookDelivery;
    expect(again.attempts.map((attempt) => attempt.kind)).toEqual(['INITIAL', 'AUTOMATIC_RETRY', 'MANUAL_RETRY']);
    await receiver.close();
  });

  it('counts timeouts, redirects and refused connections as failures, each with its reason', async () => {
    const receiver = await startReceiver((_request, reply, index) => {
      if (index === 0) reply.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      else reply.writeHead(200).end();
    });
    const shop = await shopWithReceiver(stack, receiver);
    const payment = await paidPayment(shop);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(event.attempts.map((attempt) => attempt.responseStatus)).toEqual([302, 200]);
  });

  it('honours Retry-After within the schedule: later than the table, never more than double', async () => {
    const receiver = await startReceiver((_request, reply, index) =>
      reply.writeHead(index === 0 ? 429 : 200, index === 0 ? { 'retry-after': '3600' } : {}).end(),
    );
    const shop = await shopWithReceiver(stack, receiver);
    const payment = await paidPayment(shop);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(event.attempts.map((attempt) => attempt.responseStatus)).toEqual([429, 200]);
    // Between the worker's own attempt starts, where the delay counts from: arrivals at the receiver would
    // add the two sends' jitter (a loaded machine once put them 1.3 ms closer than the delay).
    const [first, second] = event.attempts.map((attempt) => Date.parse(attempt.startedAt));
    const doubled = 2 * RETRY_DELAYS_MS[0]! * RETRY_DELAY_SCALE;
    expect(second! - first!).toBeGreaterThanOrEqual(doubled);
  });

  it('a 410 Gone disables the endpoint: pending events are not sent, new ones neither, until the URL is set again', async () => {
    const receiver = await startReceiver(answer(410, 'gone'));
    const shop = await shopWithReceiver(stack, receiver);
    const payment = await paidPayment(shop);
    await vi.waitFor(async () => {
      const events = await eventsOf(shop, payment.id);
      expect(events.map((event) => event.deliveryStatus)).toEqual(['NOT_SENT']);
    });
    const profile = dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId } })).updateBusinessProfile.businessProfile;
    expect(profile.testWebhookDisabledAt).not.toBeNull();
    const seen = receiver.received.length;
    const later = await paidPayment(shop);
    expect((await eventsOf(shop, later.id)).map((event) => event.deliveryStatus)).toEqual(['NOT_SENT']);
    expect(receiver.received).toHaveLength(seen);

    receiver.handler = answer(200);
    const restored = dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: receiver.url } }))
      .updateBusinessProfile.businessProfile;
    expect(restored.testWebhookDisabledAt).toBeNull();
    const third = await paidPayment(shop);
    await eventReaching(shop, third.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    await receiver.close();
  });

  it('a 410 Gone answered to two deliveries at once records both attempts (the two disablings do not deadlock)', async () => {
    // Two payments' events are in flight together and get their 410 at the same moment, so the worker records the two
    // disablings concurrently: each touches the profile and the other event.
    const held: Array<() => void> = [];
    const receiver = await startReceiver((_request, reply) => {
      held.push(() => reply.writeHead(410).end('gone'));
      if (held.length === 2) for (const release of held) release();
    });
    const shop = await shopWithReceiver(stack, receiver);
    const payments = await Promise.all([paidPayment(shop), paidPayment(shop)]);
    await vi.waitFor(async () => expect(held).toHaveLength(2), { timeout: 10_000 });
    await vi.waitFor(
      async () => {
        const events = (await Promise.all(payments.map((payment) => eventsOf(shop, payment.id)))).flat();
        expect(events.map((event) => [event.deliveryStatus, event.attemptCount, event.attempts.map((attempt) => attempt.responseStatus)])).toEqual([
          ['NOT_SENT', 1, [410]],
          ['NOT_SENT', 1, [410]],
        ]);
      },
      { timeout: 10_000 },
    );
    await receiver.close();
  });
});

describe('a processor call that times out', () => {
  it('leaves the payment resting in PROCESSING (payment_processing); the sync that resolves it sends the final event, once; capture likewise', async () => {
    // The stack's API gives up on the processor after 200 ms; a patient API (same database and processor)
    // authorizes and syncs. No worker: the sync is the test's. The sandbox answers each call in 1 s.
    const slow = await startStack({ sandboxLatencyMs: 1000, env: { CONNECTOR_TIMEOUT_MS: '200' }, worker: false });
    const patient = await startTestApi({ ...slow.env, CONNECTOR_TIMEOUT_MS: '10000' });
    try {
      const shop = await shopWithReceiver(slow);
      const typesOf = async (paymentId: string) => (await eventsOf(shop, paymentId)).map((row) => row.eventType);
      const syncUntil = async (paymentId: string, status: string) =>
        vi.waitFor(
          async () => expect(dataOf(await patient.as(shop.secretKey)(SyncPaymentDocument, { input: { paymentId } })).syncPayment.status).toBe(status),
          { timeout: 15_000, interval: 200 },
        );

      const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
      const confirmed = dataOf(
        await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }),
      ).confirmPayment;
      expect(confirmed.status).toBe('PROCESSING');
      expect(await typesOf(created.id)).toEqual(['PAYMENT_PROCESSING']);
      await syncUntil(created.id, 'SUCCEEDED');
      await syncUntil(created.id, 'SUCCEEDED'); // a second sync of the resolved payment adds nothing
      expect(await typesOf(created.id)).toEqual(['PAYMENT_SUCCEEDED', 'PAYMENT_PROCESSING']);

      const held = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 800, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
      dataOf(await patient.as(shop.publishableKey)(ConfirmPaymentDocument, { input: { clientSecret: held.clientSecret, paymentMethodData: card() } }));
      const capturing = dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: held.id } })).capturePayment;
      expect(capturing).toMatchObject({ status: 'PROCESSING', activeAttempt: { status: 'CAPTURE_INITIATED' } });
      expect(await typesOf(held.id)).toEqual(['PAYMENT_PROCESSING', 'PAYMENT_AUTHORIZED']);
      await syncUntil(held.id, 'SUCCEEDED');
      expect(await typesOf(held.id)).toEqual(['PAYMENT_SUCCEEDED', 'PAYMENT_PROCESSING', 'PAYMENT_AUTHORIZED']);
      await shop.receiver.close();
    } finally {
      await patient.close();
      await slow.close();
    }
  });
});

describe('sendTestWebhook', () => {
  it('sends one signed test event and reports the answer', async () => {
    const shop = await shopWithReceiver(stack);
    const event = dataOf(await shop.secret(SendTestWebhookDocument, { input: { profileId: shop.profileId } })).sendTestWebhook;
    expect(event).toMatchObject({ isTest: true, eventType: 'PAYMENT_SUCCEEDED', deliveryStatus: 'DELIVERED', attemptCount: 1 });
    const [request] = shop.receiver.received;
    expect(request!.body.toString()).toBe(event.body);
    expect(request!.headers['x-webhook-signature-512']).toBe(createHmac('sha512', shop.paymentResponseHashKey).update(request!.body).digest('hex'));
    expect(JSON.parse(event.body).content.object.metadata).toEqual({ test: true });
  });

  it('is FAILED after its one attempt when the endpoint does not answer 2xx', async () => {
    const shop = await shopWithReceiver(stack, await startReceiver(answer(500)));
    const event = dataOf(await shop.secret(SendTestWebhookDocument, { input: { profileId: shop.profileId } })).sendTestWebhook;
    expect(event).toMatchObject({ deliveryStatus: 'FAILED', attemptCount: 1, nextAttemptAt: null });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(shop.receiver.received).toHaveLength(1);
  });

  it('refuses a profile without a URL, another merchant’s profile, and a publishable key', async () => {
    const shop = await merchantWithSandbox(stack);
    expect(errorOf(await shop.secret(SendTestWebhookDocument, { input: { profileId: shop.profileId } }), 'INVALID_INPUT').extensions?.field).toBe('profileId');
    const other = await shopWithReceiver(stack);
    errorOf(await shop.secret(SendTestWebhookDocument, { input: { profileId: other.profileId } }), 'NOT_FOUND');
    errorOf(await other.publishable(SendTestWebhookDocument, { input: { profileId: other.profileId } }), 'FORBIDDEN');
    expect(other.receiver.received).toHaveLength(0);
  });
});

describe('events and event', () => {
  it('list the merchant’s own events with filters and pages, and hide other merchants’', async () => {
    const shop = await shopWithReceiver(stack);
    const paid = [await paidPayment(shop), await paidPayment(shop), await paidPayment(shop)];
    const second = { id: await declinedPayment(shop) };
    await eventReaching(shop, second.id, 'PAYMENT_FAILED', 'DELIVERED');
    const all = dataOf(await shop.secret(EventsDocument, { first: 100 })).events;
    expect(all.edges.map((edge) => edge.node.objectId)).toEqual([second.id, ...paid.map((payment) => payment.id).reverse()]);
    const failedOnly = dataOf(await shop.secret(EventsDocument, { eventTypes: ['PAYMENT_FAILED'] })).events.edges;
    expect(failedOnly.map((edge) => edge.node.objectId)).toEqual([second.id]);
    const page1 = dataOf(await shop.secret(EventsDocument, { first: 3 })).events;
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const page2 = dataOf(await shop.secret(EventsDocument, { first: 3, after: page1.pageInfo.endCursor })).events;
    expect([...page1.edges, ...page2.edges].map((edge) => edge.node.id)).toEqual(all.edges.map((edge) => edge.node.id));
    expect(page2.pageInfo.hasNextPage).toBe(false);

    const stranger = await merchantWithSandbox(stack);
    expect(dataOf(await stranger.secret(EventsDocument, {})).events.edges).toEqual([]);
    errorOf(await stranger.secret(EventDocument, { id: all.edges[0]!.node.id }), 'NOT_FOUND');
    errorOf(await stranger.secret(RetryWebhookDeliveryDocument, { input: { eventId: all.edges[0]!.node.id } }), 'NOT_FOUND');
  });

  it('name the field and the rule of bad arguments', async () => {
    const shop = await merchantWithSandbox(stack);
    expect(errorOf(await shop.secret(EventsDocument, { first: 0 }), 'INVALID_INPUT').extensions?.field).toBe('first');
    expect(errorOf(await shop.secret(EventsDocument, { first: 101 }), 'INVALID_INPUT').extensions?.field).toBe('first');
    expect(errorOf(await shop.secret(EventsDocument, { after: 'not-a-cursor' }), 'INVALID_INPUT').extensions?.field).toBe('after');
  });
});
