// A process that loses Redis cannot hear what others publish meanwhile: its live streams end with a
// retryable error (instead of going silent), and a resubscription with `after` catches up on what was missed.
import { describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, EventsDocument, PaymentEventsDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startOwnRedis } from '../support/redis-server.ts';
import { merchantWithSandbox, startStack } from '../support/stack.ts';
import { subscribeWs, wsClient } from '../support/subscriptions.ts';

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

async function pay(shop: Awaited<ReturnType<typeof merchantWithSandbox>>) {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }));
}

describe('losing Redis', () => {
  it('ends live streams with SERVICE_UNAVAILABLE, and `after` catches up on what was missed', async () => {
    const redis = await startOwnRedis();
    // No worker: its BullMQ close can hang after a Redis restart (noted in docs/troubleshooting.md).
    const stack = await startStack({ worker: false, env: { REDIS_URL: redis.url } });
    const client = wsClient(stack.api.url);
    try {
      const shop = await merchantWithSandbox(stack);
      const keyed = wsClient(stack.api.url, shop.secretKey);
      const eventIds = async () =>
        dataOf(await shop.secret(EventsDocument, { first: 20 }))
          .events.edges.map((edge) => edge.node.id)
          .reverse();
      const watched = subscribeWs(keyed, PaymentEventsDocument, { profileId: shop.profileId });
      // The stream is live once it has carried a payment's events (a fixed sleep was not enough on a busy machine).
      await pay(shop);
      const before = await eventIds();
      expect(before.length).toBeGreaterThan(0);
      const seen = await watched.waitFor(before.length);
      expect(seen.map((result) => result.paymentEvents.id)).toEqual(before);
      await redis.stop();
      const errors = await watched.waitForError(10_000);
      expect(errors.map((error) => error.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);

      // Meanwhile a payment commits (its publication is lost), then Redis is back.
      await pay(shop);
      await redis.start();
      const all = await eventIds();
      const missed = all.slice(before.length);
      expect(missed.length).toBeGreaterThan(0);
      // The dashboard reconnects from the last event it saw.
      const resumed = subscribeWs(keyed, PaymentEventsDocument, { profileId: shop.profileId, after: before.at(-1) });
      const caughtUp = await resumed.waitFor(missed.length);
      expect(caughtUp.map((result) => result.paymentEvents.id)).toEqual(missed);
      resumed.close();
      await keyed.dispose();
    } finally {
      await client.dispose();
      await stack.close();
      await redis.stop();
    }
  }, 60_000);
});
