// No event is lost when what carries it fails: Redis restarted empty (jobs gone, the API unable to enqueue
// meanwhile), and a worker killed in the middle of a delivery. PostgreSQL's outbox is the truth; the
// reconciler and BullMQ's stalled-job recovery bring every due delivery back.
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerApp } from '../../src/worker/worker.ts';
import { testEnv } from '../support/api.ts';
import { ownDatabase } from '../support/database.ts';
import { runEntry } from '../support/processes.ts';
import { answer, startReceiver, type Receiver } from '../support/receiver.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { startTestWorker } from '../support/worker.ts';
import { eventReaching, eventsOf, paidPayment, shopWithReceiver, type Shop } from '../support/webhooks.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A stack on a database of its own: no other test's worker (whose reconciler scans its whole database) may deliver its events. */
async function isolatedStack(env: Record<string, string>): Promise<Stack> {
  const database = await ownDatabase();
  cleanups.push(database.drop);
  const stack = await startStack({ worker: false, env: { DATABASE_URL: database.url, ...env } });
  cleanups.push(stack.close);
  return stack;
}

/** How many times the receiver got each event. */
const deliveriesPerEvent = (receiver: Receiver) =>
  receiver.bodies().reduce((counts, body) => counts.set(body.event_id, (counts.get(body.event_id) ?? 0) + 1), new Map<string, number>());

async function allEventsDelivered(shop: Shop, paymentIds: string[]) {
  const events = [];
  for (const paymentId of paymentIds) {
    events.push(await eventReaching(shop, paymentId, 'PAYMENT_PROCESSING', 'DELIVERED', 20_000));
    events.push(await eventReaching(shop, paymentId, 'PAYMENT_SUCCEEDED', 'DELIVERED', 20_000));
  }
  return events;
}

describe('a Redis restart', () => {
  it('loses no event: queued jobs vanish and enqueues fail while it is down, and the reconciler delivers each event once', async () => {
    const redis: OwnRedis = await startOwnRedis();
    cleanups.push(redis.stop);
    // No worker yet: the jobs wait in Redis, where the restart destroys them.
    const stack = await isolatedStack({ REDIS_URL: redis.url });
    const shop = await shopWithReceiver(stack, await startReceiver(answer(200)));
    cleanups.push(shop.receiver.close);

    const queuedThenLost = await paidPayment(shop);
    await redis.stop();
    const madeWhileDown = await paidPayment(shop); // its events commit; relaying them to Redis fails
    expect(madeWhileDown.status).toBe('SUCCEEDED');
    await redis.start(); // empty
    expect((await eventsOf(shop, madeWhileDown.id)).map((event) => event.deliveryStatus)).toEqual(['PENDING', 'PENDING']);

    const worker: WorkerApp = await startTestWorker(stack.env);
    cleanups.push(worker.close);
    const events = await allEventsDelivered(shop, [queuedThenLost.id, madeWhileDown.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // a reconciler round more: nothing is sent twice
    expect(Object.fromEntries(deliveriesPerEvent(shop.receiver))).toEqual(Object.fromEntries(events.map((event) => [event.id, 1])));
    for (const event of events) expect(event.attempts.map((attempt) => [attempt.attemptNumber, attempt.responseStatus])).toEqual([[1, 200]]);
  }, 60_000);
});

describe('a worker killed mid-delivery', () => {
  it('loses no event: once its claim runs out, another worker delivers it', async () => {
    // A short HTTP timeout makes the claim (timeout + 5 s) and BullMQ's lock short enough for a test.
    const stack = await isolatedStack({ WEBHOOK_TIMEOUT_MS: '1000' });
    let killed = false;
    // Until the worker is killed, the receiver holds every request open: the worker dies mid-delivery.
    const receiver = await startReceiver((_request, reply) => {
      if (killed) reply.writeHead(200).end();
    });
    cleanups.push(receiver.close);
    const shop = await shopWithReceiver(stack, receiver);

    const doomed = runEntry('worker', testEnv(stack.env));
    cleanups.push(async () => doomed.kill());
    const payment = await paidPayment(shop);
    await receiver.waitForRequests(1);
    await doomed.kill();
    killed = true;
    const inFlight = new Set(receiver.bodies().map((body) => body.event_id));
    expect(inFlight.size).toBeGreaterThan(0);

    const worker = await startTestWorker(stack.env);
    cleanups.push(worker.close);
    const events = await allEventsDelivered(shop, [payment.id]);
    for (const event of events) {
      const last = event.attempts.at(-1)!;
      expect(last.responseStatus).toBe(200);
      if (inFlight.has(event.id)) {
        // The killed worker's attempt reached the receiver but was never recorded (or, on a slow machine,
        // timed out first): sent again, at least once, never lost. Every send has its attempt number.
        const sends = deliveriesPerEvent(receiver).get(event.id)!;
        expect(sends).toBeGreaterThanOrEqual(2);
        expect(last).toMatchObject({ attemptNumber: sends, kind: 'AUTOMATIC_RETRY' });
      }
    }
  }, 60_000);
});
