// Fault: the webhook worker process is killed with SIGKILL in the middle of deliveries, again and again,
// while payments keep coming. What must hold: every event reaches the merchant (at least once: checked
// against the database and against an independent receiver that records every request), and duplicates,
// which a kill makes (a delivery the receiver got but the dead worker never recorded), are counted and
// bounded: at most one per delivery in flight at each kill, so at most WEBHOOK_CONCURRENCY per kill.
import { describe, expect, it } from 'vitest';
import { auditDeliveries, settledEvents } from '../support/delivery-audit.ts';
import { deferredCleanups } from '../support/cleanups.ts';
import { eventsOf, paidPayment, shopWithReceiver } from '../support/webhooks.ts';
import { startProcessStack } from '../support/process-stack.ts';
import { startReceiver } from '../support/receiver.ts';
import type { EntryProcess } from '../support/processes.ts';

const KILLS = 4;
const CONCURRENCY = 8;
const defer = deferredCleanups();

describe('a webhook worker killed with SIGKILL mid-delivery, repeatedly, under load', () => {
  it('loses no event; each kill duplicates at most the deliveries it interrupted', async () => {
    // A short HTTP timeout makes the claim of a dead worker's delivery (timeout + 5 s) and BullMQ's lock
    // run out soon enough for a test.
    const stack = await startProcessStack({ apis: 1, workers: 0, env: { WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_CONCURRENCY: String(CONCURRENCY) } });
    defer(stack.close);
    // The merchant's endpoint takes 50-250 ms per delivery, so that a worker always has some in flight.
    const inFlight = new Set<string>();
    const receiver = await startReceiver((request, reply) => {
      const eventId = (JSON.parse(request.body.toString('utf8')) as { event_id: string }).event_id;
      inFlight.add(eventId);
      setTimeout(
        () => {
          inFlight.delete(eventId);
          if (!reply.socket?.destroyed) reply.writeHead(200).end();
        },
        50 + Math.random() * 200,
      );
    });
    defer(receiver.close);
    const shop = await shopWithReceiver(stack, receiver);

    // Load: payments keep being made (one event each, payment_succeeded) until the kills are over.
    let loading = true;
    const paymentIds: string[] = [];
    const load = Promise.all(
      Array.from({ length: 2 }, async () => {
        while (loading) {
          paymentIds.push((await paidPayment(shop)).id);
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
      }),
    );

    // Each worker is killed once it is in the middle of deliveries; the next one starts at once.
    const interrupted: string[][] = [];
    let worker: EntryProcess = await stack.startWorker();
    for (let kill = 0; kill < KILLS; kill += 1) {
      const before = receiver.received.length;
      await expect.poll(() => receiver.received.length >= before + 10 && inFlight.size > 0, { timeout: 30_000, interval: 5 }).toBe(true);
      // These the receiver has taken in but not yet answered: the worker cannot have recorded them.
      interrupted.push([...inFlight]);
      await worker.kill();
      worker = await stack.startWorker();
    }
    loading = false;
    await load;

    const profileIds = [shop.profileId];
    const events = await settledEvents(stack.databaseUrl, profileIds, 90_000);
    const audit = await auditDeliveries(stack.databaseUrl, profileIds, receiver);
    console.info(
      `worker kills: ${KILLS}, payments: ${paymentIds.length}, events: ${events.length}, deliveries: ${receiver.received.length}, ` +
        `duplicates: ${audit.duplicates} (interrupted at the kills: ${interrupted.map((ids) => ids.length).join('+')}), most arrivals of one event: ${audit.mostArrivals}`,
    );

    // Every event, in the database and at the receiver.
    expect(events).toHaveLength(paymentIds.length);
    expect(events.filter((event) => event.deliveryStatus !== 'DELIVERED')).toEqual([]);
    expect(audit.missing).toEqual([]);
    expect(audit.unknown).toEqual([]);
    // Duplicates: at least the deliveries each kill interrupted (each is sent again), at most what could be in flight.
    for (const eventId of interrupted.flat()) expect(audit.arrivals.get(eventId), eventId).toBeGreaterThanOrEqual(2);
    expect(audit.duplicates).toBeGreaterThanOrEqual(new Set(interrupted.flat()).size);
    expect(audit.duplicates).toBeLessThanOrEqual(KILLS * CONCURRENCY);
    expect(audit.mostArrivals).toBeLessThanOrEqual(1 + KILLS);

    // The worker's own record of an interrupted event: the send it never recorded was sent again, and the
    // last attempt (an automatic retry) was answered 200.
    for (const eventId of new Set(interrupted.flat())) {
      const event = (await eventsOf(shop, events.find((row) => row.id === eventId)!.objectId)).find((candidate) => candidate.id === eventId)!;
      expect(event.attempts.at(-1)).toMatchObject({ kind: 'AUTOMATIC_RETRY', responseStatus: 200 });
      expect(event.attemptCount).toBeGreaterThanOrEqual(2);
    }
  });
});
