// Scale-out: two API processes and two worker processes on one PostgreSQL database and one Redis prefix,
// as behind a load balancer. What must hold: every event is delivered exactly as one API and one worker
// deliver it (each once, in one attempt: two workers racing for the same job never send it twice), a
// subscriber on one API process sees changes made through the other, and 100 concurrent confirms of one
// payment, spread over both API processes, make exactly one authorization at the processor.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument, PaymentEventsDocument, PaymentUpdatedDocument } from '../gql/graphql.ts';
import { auditDeliveries, settledEvents } from '../support/delivery-audit.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startProcessStack, type ProcessStack } from '../support/process-stack.ts';
import { startReceiver } from '../support/receiver.ts';
import { liveChannel, subscribeWs, wsClient } from '../support/subscriptions.ts';
import { LIVE_TOPICS } from '../../src/api/live-feed.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

let stack: ProcessStack;
const shops: Shop[] = [];
const clients: Client[] = [];
beforeAll(async () => {
  stack = await startProcessStack({ apis: 2, workers: 2, tap: true });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await Promise.all(shops.map((shop) => shop.receiver.close()));
  await stack?.close();
});

async function shop(receiver?: Awaited<ReturnType<typeof startReceiver>>) {
  const created = await shopWithReceiver(stack, receiver);
  shops.push(created);
  return created;
}

/** Which process each of the receiver's connections came from (the kernel's socket table). */
async function sendersByPort(receiverPort: number): Promise<Map<number, number>> {
  const { stdout } = await promisify(execFile)('ss', ['-tnpH', 'state', 'established', 'dport', '=', `:${receiverPort}`]);
  const senders = new Map<number, number>();
  for (const line of stdout.split('\n')) {
    const match = /\S+:(\d+)\s+\S+:\d+\s+users:\(\("[^"]+",pid=(\d+)/.exec(line);
    if (match) senders.set(Number(match[1]), Number(match[2]));
  }
  return senders;
}

describe('two API processes and two worker processes on one database and one Redis', () => {
  it('deliver every event exactly once, in one attempt, though both workers take deliveries', async () => {
    // An endpoint that takes a moment per delivery, so that both workers have deliveries in flight at once.
    const receiver = await startReceiver((_request, reply) => {
      setTimeout(() => reply.writeHead(200).end(), Math.random() * 40);
    });
    const merchant = await shop(receiver);
    const [first, second] = stack.apis;
    // 40 payments, each created through one API process and confirmed through the other, 8 at a time.
    const payments = 40;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < payments) {
          const index = next++;
          const [creator, confirmer] = index % 2 === 0 ? [first!, second!] : [second!, first!];
          const created = dataOf(
            await creator.as(merchant.secretKey)(CreatePaymentDocument, { input: { amount: 1000 + index, currency: 'USD' } }),
          ).createPayment;
          const confirmed = dataOf(
            await confirmer.as(merchant.publishableKey)(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }),
          ).confirmPayment;
          expect(confirmed.status).toBe('SUCCEEDED');
        }
      }),
    );
    const events = await settledEvents(stack.databaseUrl, [merchant.profileId], 60_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // reconciler rounds of both workers: nothing goes out again
    const audit = await auditDeliveries(stack.databaseUrl, [merchant.profileId], receiver);

    expect(events).toHaveLength(payments); // one per card payment: payment_succeeded
    expect(audit.missing).toEqual([]);
    expect(audit.unknown).toEqual([]);
    expect(audit.duplicates).toBe(0);
    for (const event of audit.events) expect(event).toMatchObject({ deliveryStatus: 'DELIVERED', attemptCount: 1 });

    // Both worker processes delivered some of them (so they did race for the queue).
    const senders = await sendersByPort(receiver.port);
    const deliveredBy = new Set(receiver.received.map((request) => senders.get(request.remotePort!)).filter((pid) => pid !== undefined));
    expect([...deliveredBy].sort()).toEqual(stack.workers.map((worker) => worker.pid).sort());
  });

  it('a subscriber on one API process sees the changes made through the other', async () => {
    const merchant = await shop();
    const [watching, acting] = stack.apis;
    const created = dataOf(await acting!.as(merchant.secretKey)(CreatePaymentDocument, { input: { amount: 2500, currency: 'USD' } })).createPayment;
    const client = wsClient(watching!.url, merchant.secretKey);
    clients.push(client);
    const updates = subscribeWs(client, PaymentUpdatedDocument, { paymentId: created.id });
    const events = subscribeWs(client, PaymentEventsDocument, { profileId: merchant.profileId });
    // The change is made only once Redis has both subscriptions (its publications reach no one before):
    // the watching process subscribes after authenticating the key and checking the payment.
    const redis = new Redis(); // the processes use the default REDIS_URL too
    try {
      const prefix = stack.env.REDIS_PREFIX;
      await expect
        .poll(async () => (await redis.pubsub('CHANNELS', `${prefix}:live:*`)).sort(), { timeout: 15_000, interval: 20 })
        .toEqual([`${prefix}:${LIVE_TOPICS.events}:${merchant.merchantId}:TEST`, `${prefix}:${liveChannel.payment(created.id)}`]);
    } finally {
      redis.disconnect();
    }

    dataOf(await acting!.as(merchant.publishableKey)(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }));
    // The live feed shows every committed state, the pending one before the processor call included; the
    // events (webhooks) only where the payment landed.
    const seen = await updates.waitFor(2, 15_000);
    expect(seen.map((result) => result.paymentUpdated.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
    const streamed = await events.waitFor(1, 15_000);
    expect(streamed.map((result) => [result.paymentEvents.eventType, result.paymentEvents.objectId])).toEqual([['PAYMENT_SUCCEEDED', created.id]]);
    updates.close();
    events.close();
  });

  it('100 concurrent confirms of one payment, over both API processes: one authorization, one success, 99 clear refusals', async () => {
    const merchant = await shop();
    const created = dataOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 4200, currency: 'USD' } })).createPayment;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        stack.apis[index % 2]!.as(merchant.publishableKey)(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }),
      ),
    );
    const succeeded = results.filter((result) => result.data?.confirmPayment);
    const refused = results.flatMap((result) => result.errors ?? []);
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]!.data!.confirmPayment.status).toBe('SUCCEEDED');
    expect(refused).toHaveLength(99);
    // Each refusal says why: another request got there first (CONFLICT), the payment is no longer awaiting a
    // confirm (INVALID_STATE), or, on a machine this burst saturates, no database connection came free in time
    // (SERVICE_UNAVAILABLE, retry later).
    for (const error of refused) expect(['CONFLICT', 'INVALID_STATE', 'SERVICE_UNAVAILABLE']).toContain(error.extensions?.code);
    const codes = refused.map((error) => error.extensions?.code);
    console.info(
      `100 confirms: ${codes.filter((code) => code === 'CONFLICT').length} CONFLICT, ${codes.filter((code) => code === 'INVALID_STATE').length} INVALID_STATE`,
    );

    // The processor's side: exactly one authorization request for this merchant, and it was not a replay.
    expect(stack.tap!.exchanges.filter((exchange) => exchange.method === 'POST' && exchange.apiKey === merchant.sandboxKey)).toHaveLength(1);
    expect(stack.tap!.authorizations(merchant.sandboxKey)).toHaveLength(1);
    const read = dataOf(await merchant.secret(PaymentDocument, { id: created.id })).payment!;
    expect(read).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1, amountReceived: 4200 });
    expect(read.attempts).toHaveLength(1);
    // One event, where the payment landed, delivered once (by either of the two workers).
    await eventReaching(merchant, created.id, 'PAYMENT_SUCCEEDED', 'DELIVERED', 30_000);
    expect((await eventsOf(merchant, created.id)).map((event) => [event.eventType, event.attemptCount])).toEqual([['PAYMENT_SUCCEEDED', 1]]);
  });
});
