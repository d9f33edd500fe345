// Fault: Redis (a private one: never the machine's shared server) is restarted empty, or flushed, while
// deliveries are pending: queued jobs and scheduled retries vanish, and enqueues fail while it is down.
// What must hold: PostgreSQL's outbox is the truth, so the reconciler re-enqueues every due delivery and
// nothing is lost; since each attempt is claimed in PostgreSQL, nothing is sent twice either.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { deferredCleanups } from '../support/cleanups.ts';
import { auditDeliveries, eventRows, settledEvents } from '../support/delivery-audit.ts';
import { startProcessStack } from '../support/process-stack.ts';
import { answer, startReceiver } from '../support/receiver.ts';
import { startOwnRedis } from '../support/redis-server.ts';
import { eventsOf, paidPayment, shopWithReceiver } from '../support/webhooks.ts';

const defer = deferredCleanups();

async function faultStack(env: Record<string, string> = {}) {
  const redis = await startOwnRedis();
  defer(redis.stop);
  const stack = await startProcessStack({ apis: 1, workers: 0, env: { REDIS_URL: redis.url, ...env } });
  defer(stack.close);
  return { redis, stack };
}

describe('a Redis restart', () => {
  it('loses no event: queued jobs vanish and enqueues fail while it is down, and the reconciler delivers each event once', async () => {
    // No worker yet: the jobs wait in Redis, where the restart destroys them.
    const { redis, stack } = await faultStack();
    const shop = await shopWithReceiver(stack, await startReceiver(answer(200)));
    defer(shop.receiver.close);

    const queuedThenLost = await paidPayment(shop);
    await redis.stop();
    const madeWhileDown = await paidPayment(shop); // its event commits; relaying it to Redis fails
    expect(madeWhileDown.status).toBe('SUCCEEDED');
    await redis.start(); // empty
    expect((await eventsOf(shop, madeWhileDown.id)).map((event) => event.deliveryStatus)).toEqual(['PENDING']);
    expect(queuedThenLost.status).toBe('SUCCEEDED');

    await stack.startWorker();
    const events = await settledEvents(stack.databaseUrl, [shop.profileId]);
    expect(events).toHaveLength(2); // one per card payment: payment_succeeded
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // a reconciler round more: nothing is sent twice
    const audit = await auditDeliveries(stack.databaseUrl, [shop.profileId], shop.receiver);
    expect(audit).toMatchObject({ missing: [], unknown: [], duplicates: 0 });
    for (const event of await eventRows(stack.databaseUrl, [shop.profileId])) expect(event).toMatchObject({ deliveryStatus: 'DELIVERED', attemptCount: 1 });
  });

  it('with a worker running and retries scheduled: a restart, then a FLUSHALL, lose none of them, and no event is delivered twice', async () => {
    // Retries 0.6 s, 3 s, 3 s, 6 s … after each failure: they wait in Redis as delayed jobs.
    const { redis, stack } = await faultStack({ WEBHOOK_RETRY_DELAY_SCALE: '0.01' });
    let healthy = false;
    /** What the receiver answered each request, by event. */
    const answered = new Map<string, number[]>();
    const receiver = await startReceiver((request, reply) => {
      const status = healthy ? 200 : 503;
      const eventId = (JSON.parse(request.body.toString('utf8')) as { event_id: string }).event_id;
      answered.set(eventId, [...(answered.get(eventId) ?? []), status]);
      reply.writeHead(status).end();
    });
    defer(receiver.close);
    const shop = await shopWithReceiver(stack, receiver);
    await stack.startWorker();

    /** Waits until every event of the shop has reached the receiver at least `times` more times than in `since`. */
    const arrivals = () => {
      const counts = new Map<string, number>();
      for (const body of receiver.bodies()) counts.set(body.event_id, (counts.get(body.event_id) ?? 0) + 1);
      return counts;
    };
    const eachArrivesAgain = async (since: Map<string, number>) => {
      const ids = (await eventRows(stack.databaseUrl, [shop.profileId])).map((event) => event.id);
      await expect.poll(() => ids.filter((id) => (arrivals().get(id) ?? 0) <= (since.get(id) ?? 0)), { timeout: 30_000, interval: 50 }).toEqual([]);
    };

    // Payments whose events are failing: each has had its first attempt and waits for a retry.
    for (let index = 0; index < 5; index += 1) await paidPayment(shop);
    await eachArrivesAgain(new Map());

    // Redis goes away (and comes back empty) while those retries are scheduled; payments keep committing.
    await redis.stop();
    for (let index = 0; index < 3; index += 1) expect((await paidPayment(shop)).status).toBe('SUCCEEDED');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.start();
    // Every event, those made while Redis was down too, is tried again: the reconciler re-enqueued it.
    await eachArrivesAgain(arrivals());

    // A FLUSHALL on a live Redis: the queue, its scheduled retries and BullMQ's own keys are gone.
    const admin = new Redis(redis.url);
    defer(() => admin.quit());
    await admin.flushall();
    await eachArrivesAgain(arrivals());

    // The endpoint recovers: every event is delivered, once.
    healthy = true;
    const events = await settledEvents(stack.databaseUrl, [shop.profileId], 60_000);
    expect(events).toHaveLength(8); // one per card payment: payment_succeeded
    const audit = await auditDeliveries(stack.databaseUrl, [shop.profileId], receiver);
    expect(audit.missing).toEqual([]);
    expect(audit.unknown).toEqual([]);
    expect(events.filter((event) => event.deliveryStatus !== 'DELIVERED')).toEqual([]);
    // Exactly one 200 per event, and the receiver got exactly the attempts the worker recorded (none unrecorded).
    for (const event of events) {
      expect(
        answered.get(event.id)!.filter((status) => status === 200),
        event.id,
      ).toEqual([200]);
      expect(audit.arrivals.get(event.id), event.id).toBe(event.attemptCount);
    }
  });
});
