// A process that loses Redis cannot hear what others publish meanwhile: its live streams end with a
// retryable error (instead of going silent), and a resubscription with `after` catches up on what was missed.
import { describe, expect, it } from 'vitest';
import { CapturePaymentDocument, ConfirmPaymentDocument, CreatePaymentDocument, EventsDocument, PaymentEventsDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startOwnRedis } from '../support/redis-server.ts';
import { merchantWithSandbox, startStack } from '../support/stack.ts';
import { subscribeWs, wsClient } from '../support/subscriptions.ts';

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

describe('losing Redis', () => {
  it('ends live streams with SERVICE_UNAVAILABLE, and `after` catches up on what was missed', async () => {
    const redis = await startOwnRedis();
    // No worker: its BullMQ close can hang after a Redis restart (noted in the README's troubleshooting).
    const stack = await startStack({ worker: false, env: { REDIS_URL: redis.url } });
    const client = wsClient(stack.api.url);
    try {
      const shop = await merchantWithSandbox(stack);
      const keyed = wsClient(stack.api.url, shop.secretKey);
      const watched = subscribeWs(keyed, PaymentEventsDocument, { profileId: shop.profileId });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await redis.stop();
      const errors = await watched.waitForError(10_000);
      expect(errors.map((error) => error.extensions?.code)).toEqual(['SERVICE_UNAVAILABLE']);

      // Meanwhile a payment is authorized and captured (two events; their publications are lost), then Redis is back.
      const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
      dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }));
      dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id } }));
      await redis.start();
      const all = dataOf(await shop.secret(EventsDocument, { first: 10 })).events.edges.map((edge) => edge.node.id).reverse();
      expect(all).toHaveLength(2);
      // The dashboard reconnects from the last event it saw (none here: it asks from an older anchor).
      const resumed = subscribeWs(keyed, PaymentEventsDocument, { profileId: shop.profileId, after: all[0] });
      const caughtUp = await resumed.waitFor(1);
      expect(caughtUp.map((result) => result.paymentEvents.id)).toEqual([all[1]]);
      resumed.close();
      await keyed.dispose();
    } finally {
      await client.dispose();
      await stack.close();
      await redis.stop();
    }
  }, 60_000);
});
