// Fault: the merchant's endpoint is hostile or broken. The real worker process delivers to real receivers on
// real sockets that answer too slowly, rate-limit, say 410 Gone, redirect to a private address, answer 5 MB
// or an endless body, or reset the connection. What must hold (docs/webhooks.md, "Delivery and retries",
// "Where it may go"): the exchange is bounded by WEBHOOK_TIMEOUT_MS, at most 20 KB of an answer is read and stored, a redirect is a failure
// and is never followed, Retry-After stretches the next delay within [table, 2 × table], a 410 disables the
// endpoint, and every failure is recorded with its reason and retried until the event is delivered.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_DELAYS_MS } from '../../src/modules/events/retry-schedule.ts';
import { MAX_STORED_RESPONSE_BYTES } from '../../src/modules/events/sender.ts';
import { RetryWebhookDeliveryDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { deferredCleanups } from '../support/cleanups.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startProcessStack, type ProcessStack } from '../support/process-stack.ts';
import { startReceiver, type ReceivedRequest, type ReceiverHandler } from '../support/receiver.ts';
import { eventReaching, eventsOf, paidPayment, settlingPayment, shopWithReceiver } from '../support/webhooks.ts';

// Long enough that a loaded 2-CPU machine answers an ordinary request within it; short enough for a test.
const TIMEOUT_MS = 2_500;
const RETRY_DELAY_SCALE = 0.01; // the first retry 600 ms after the attempt before: long enough to measure
const FIRST_DELAY_MS = RETRY_DELAYS_MS[0]! * RETRY_DELAY_SCALE;

let stack: ProcessStack;
const defer = deferredCleanups();
beforeAll(async () => {
  stack = await startProcessStack({
    apis: 1,
    workers: 1,
    env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_DELAY_SCALE: String(RETRY_DELAY_SCALE) },
    sandbox: { bankDebitSettleMs: 200 },
  });
});
afterAll(() => stack?.close());

type Behaviour = (reply: ServerResponse, event: { id: string; type: string; arrival: number }, request: ReceivedRequest) => void;

/** A handler that gives each event's `arrival`-th delivery (1 is the first) to `behaviour`. */
function perEvent(behaviour: Behaviour): ReceiverHandler {
  const arrivals = new Map<string, number>();
  return (request, reply) => {
    const body = JSON.parse(request.body.toString('utf8')) as { event_id: string; event_type: string };
    const arrival = (arrivals.get(body.event_id) ?? 0) + 1;
    arrivals.set(body.event_id, arrival);
    behaviour(reply, { id: body.event_id, type: body.event_type, arrival }, request);
  };
}

/** A merchant whose endpoint behaves as `handler` says; its bank debit's two events (processing, succeeded). */
async function hostileShop(handler: ReceiverHandler) {
  const receiver = await startReceiver(handler);
  defer(receiver.close);
  const shop = await shopWithReceiver(stack, receiver);
  const payment = await settlingPayment(shop);
  const arrivalsOf = (eventId: string) => receiver.received.filter((request) => request.body.toString('utf8').includes(`"event_id":"${eventId}"`));
  return { shop, receiver, payment, arrivalsOf };
}

/** Both events of the payment once delivered, with their attempts as the worker recorded them. */
async function deliveredEvents(shop: Awaited<ReturnType<typeof hostileShop>>['shop'], paymentId: string) {
  return Promise.all(['PAYMENT_PROCESSING', 'PAYMENT_SUCCEEDED'].map((type) => eventReaching(shop, paymentId, type, 'DELIVERED', 30_000)));
}

/** A 200, unless the sender has given up on the connection meanwhile. */
const ok = (reply: ServerResponse) => {
  if (!reply.destroyed && !reply.socket?.destroyed) reply.writeHead(200).end('ok');
};

describe('a receiver slower than WEBHOOK_TIMEOUT_MS', () => {
  it('is a failure after the timeout (the worker does not wait for it), retried and then delivered', async () => {
    const { shop, payment, arrivalsOf } = await hostileShop(
      perEvent((reply, { arrival }) => {
        if (arrival === 1) setTimeout(() => ok(reply), TIMEOUT_MS * 3).unref();
        else ok(reply);
      }),
    );
    for (const event of await deliveredEvents(shop, payment.id)) {
      const [late, delivered] = event.attempts;
      expect(event.attempts).toHaveLength(2);
      expect(late).toMatchObject({ attemptNumber: 1, responseStatus: null, error: `no response within ${TIMEOUT_MS} ms` });
      expect(late!.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      expect(late!.latencyMs).toBeLessThan(TIMEOUT_MS * 3);
      expect(delivered).toMatchObject({ attemptNumber: 2, kind: 'AUTOMATIC_RETRY', responseStatus: 200 });
      expect(arrivalsOf(event.id)).toHaveLength(2);
    }
  });

  it('whose answer starts in time but whose body trickles on: the status line counts, the body is cut at the timeout', async () => {
    const { shop, payment, arrivalsOf } = await hostileShop((_request, reply) => {
      reply.writeHead(200, { 'content-type': 'text/plain' });
      reply.write('slow');
      const drip = setInterval(() => (reply.destroyed ? clearInterval(drip) : reply.write('.')), 100);
      reply.on('close', () => clearInterval(drip));
    });
    for (const event of await deliveredEvents(shop, payment.id)) {
      expect(event.attempts).toHaveLength(1);
      expect(event.attempts[0]).toMatchObject({ responseStatus: 200, responseBodyTruncated: true, error: null });
      expect(event.attempts[0]!.responseBody).toMatch(/^slow\.*$/);
      expect(event.attempts[0]!.latencyMs).toBeLessThan(TIMEOUT_MS * 3);
      expect(arrivalsOf(event.id)).toHaveLength(1);
    }
  });
});

describe('a receiver that answers 429 with Retry-After', () => {
  it('gets the next attempt no sooner than the table says, and no later than twice the table', async () => {
    // The processing event is asked to wait an hour (more than double the table), the succeeded event no time at all.
    const { shop, payment, arrivalsOf } = await hostileShop(
      perEvent((reply, { arrival, type }) => {
        if (arrival > 1) return ok(reply);
        reply.writeHead(429, { 'retry-after': type === 'payment_processing' ? '3600' : '0' }).end('slow down');
      }),
    );
    const [processing, succeeded] = await deliveredEvents(shop, payment.id);
    for (const event of [processing!, succeeded!]) {
      expect(event.attempts.map((attempt) => attempt.responseStatus)).toEqual([429, 200]);
      expect(event.attempts[0]!.responseBody).toBe('slow down');
    }
    for (const event of [processing!, succeeded!]) expect(arrivalsOf(event.id)).toHaveLength(2);
    // Measured between the worker's own attempt starts: the delay counts from there, and the second attempt
    // cannot be claimed before it is due (arrivals at the receiver would add the send times' jitter).
    const gap = (event: typeof processing) => Date.parse(event!.attempts[1]!.startedAt) - Date.parse(event!.attempts[0]!.startedAt);
    // An hour is capped at twice the table's delay.
    expect(gap(processing)).toBeGreaterThanOrEqual(2 * FIRST_DELAY_MS);
    expect(gap(processing)).toBeLessThan(2 * FIRST_DELAY_MS + 3_000);
    // Zero never shortens the table's delay.
    expect(gap(succeeded)).toBeGreaterThanOrEqual(FIRST_DELAY_MS);
  });
});

describe('a receiver that answers 410 Gone', () => {
  it('disables the endpoint (logged by the worker): pending and new events are NOT_SENT until the URL is set again', async () => {
    const { shop, receiver, payment } = await hostileShop((_request, reply) => reply.writeHead(410).end('gone'));
    // NOT_SENT, and no claim still on its way to the receiver (an attempt is counted when claimed, recorded when answered).
    await expect
      .poll(async () => (await eventsOf(shop, payment.id)).map((event) => [event.deliveryStatus, event.attemptCount - event.attempts.length]), {
        timeout: 30_000,
        interval: 100,
      })
      .toEqual([
        ['NOT_SENT', 0],
        ['NOT_SENT', 0],
      ]);
    const events = await eventsOf(shop, payment.id);
    const gone = events.flatMap((event) => event.attempts);
    expect(gone.length).toBeGreaterThanOrEqual(1);
    for (const attempt of gone) expect(attempt).toMatchObject({ responseStatus: 410, responseBody: 'gone' });
    await expect
      .poll(() => stack.workers[0]!.output.stdout, { timeout: 5_000 })
      .toMatch(/"eventId":"evt_[^"]+".*"msg":"webhook endpoint answered 410 Gone and was disabled"/);
    const profile = dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId } })).updateBusinessProfile.businessProfile;
    expect(profile.testWebhookDisabledAt).not.toBeNull();

    // Nothing more is sent there, not even the events of a new payment.
    const seen = receiver.received.length;
    const later = await paidPayment(shop);
    expect((await eventsOf(shop, later.id)).map((event) => event.deliveryStatus)).toEqual(['NOT_SENT']);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received).toHaveLength(seen);

    // The merchant fixes the endpoint and sets the URL again: new events go out, and an old one can be sent by hand.
    receiver.handler = (_request, reply) => ok(reply);
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: receiver.url } }));
    const third = await paidPayment(shop);
    await eventReaching(shop, third.id, 'PAYMENT_SUCCEEDED', 'DELIVERED', 30_000);
    const resent = dataOf(await shop.secret(RetryWebhookDeliveryDocument, { input: { eventId: events[0]!.id } })).retryWebhookDelivery;
    expect(resent).toMatchObject({ deliveryStatus: 'DELIVERED' });
    expect(resent.attempts.at(-1)).toMatchObject({ kind: 'MANUAL_RETRY', responseStatus: 200 });
  });
});

describe('a receiver that redirects to a private address', () => {
  it('is never followed: the redirect is a failed attempt, the private address gets nothing, the retry is delivered', async () => {
    // What the redirects point at: a listener on this machine (loopback) that must never be reached.
    const inside = await startReceiver();
    defer(inside.close);
    const { shop, payment, arrivalsOf } = await hostileShop(
      perEvent((reply, { arrival, type }) => {
        if (arrival > 1) return ok(reply);
        const location = type === 'payment_processing' ? `${inside.url}/admin` : 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';
        reply.writeHead(type === 'payment_processing' ? 302 : 307, { location }).end();
      }),
    );
    const [processing, succeeded] = await deliveredEvents(shop, payment.id);
    expect(processing!.attempts.map((attempt) => [attempt.responseStatus, attempt.error])).toEqual([
      [302, null],
      [200, null],
    ]);
    expect(succeeded!.attempts.map((attempt) => [attempt.responseStatus, attempt.error])).toEqual([
      [307, null],
      [200, null],
    ]);
    for (const event of [processing!, succeeded!]) expect(arrivalsOf(event.id)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(inside.received).toHaveLength(0);
  });
});

describe('a receiver that answers with a huge body', () => {
  it('a 5 MB answer: 20 KB of it is read and stored (truncated), its status decides', async () => {
    const huge = Buffer.alloc(5 * 1024 * 1024, 'x');
    const { shop, payment } = await hostileShop(
      perEvent((reply, { arrival, type }) => {
        // The processing event's 5 MB comes with a 200; the succeeded event's first 5 MB with a 500.
        const status = type === 'payment_processing' || arrival > 1 ? 200 : 500;
        reply.writeHead(status, { 'content-type': 'text/plain', 'content-length': huge.length }).end(huge);
      }),
    );
    const [processing, succeeded] = await deliveredEvents(shop, payment.id);
    expect(processing!.attempts).toHaveLength(1);
    expect(succeeded!.attempts.map((attempt) => attempt.responseStatus)).toEqual([500, 200]);
    for (const attempt of [...processing!.attempts, ...succeeded!.attempts]) {
      expect(attempt.responseBodyTruncated).toBe(true);
      expect(attempt.responseBody).toBe('x'.repeat(MAX_STORED_RESPONSE_BYTES));
    }
  });

  it('an endless answer: the worker stops reading after 20 KB, without waiting for the timeout', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'y');
    const { shop, payment } = await hostileShop((_request, reply) => {
      reply.writeHead(200, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!reply.destroyed && reply.write(chunk));
      };
      reply.on('drain', pump);
      pump();
    });
    for (const event of await deliveredEvents(shop, payment.id)) {
      expect(event.attempts).toHaveLength(1);
      expect(event.attempts[0]).toMatchObject({ responseStatus: 200, responseBodyTruncated: true, error: null });
      expect(event.attempts[0]!.responseBody).toHaveLength(MAX_STORED_RESPONSE_BYTES);
      expect(event.attempts[0]!.latencyMs).toBeLessThan(TIMEOUT_MS);
    }
  });
});

describe('a receiver that resets the connection', () => {
  it('before answering: a failure with its reason, retried and delivered', async () => {
    const { shop, payment, arrivalsOf } = await hostileShop(
      perEvent((reply, { arrival }) => {
        if (arrival === 1) reply.socket!.resetAndDestroy();
        else ok(reply);
      }),
    );
    for (const event of await deliveredEvents(shop, payment.id)) {
      const [reset, delivered] = event.attempts;
      expect(event.attempts).toHaveLength(2);
      expect(reset).toMatchObject({ responseStatus: null });
      expect(reset!.error).toMatch(/^connection failed: ECONNRESET/);
      expect(delivered).toMatchObject({ responseStatus: 200 });
      expect(arrivalsOf(event.id)).toHaveLength(2);
    }
  });

  it('in the middle of the answer’s body: the status line was in, so a 200 counts (the body is marked truncated)', async () => {
    const { shop, payment, arrivalsOf } = await hostileShop((_request, reply) => {
      reply.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1000 });
      reply.write('partial', () => setTimeout(() => reply.socket?.resetAndDestroy(), 50));
    });
    for (const event of await deliveredEvents(shop, payment.id)) {
      expect(event.attempts).toHaveLength(1);
      expect(event.attempts[0]).toMatchObject({ responseStatus: 200, responseBody: 'partial', responseBodyTruncated: true });
      expect(arrivalsOf(event.id)).toHaveLength(1);
    }
  });
});
