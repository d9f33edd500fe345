// paymentEvents: a merchant's events live over graphql-ws, catch-up after a disconnect with `after` (no gap,
// no repeat at the seam), filters, who may subscribe, a revoked key ending its subscriptions, and the push side
// that feeds graphql-ws subscribers without `after`.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from 'graphql-ws';
import {
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreateApiKeyDocument,
  CreatePaymentDocument,
  EventDocument,
  EventsDocument,
  PaymentEventsDocument,
  PaymentEventsSignedDocument,
  PaymentEventsWholeDocument,
  RevokeApiKeyDocument,
} from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { liveChannel, subscribeWs, untilLive, wsClient } from '../support/subscriptions.ts';
import { paidPayment, shopWithReceiver } from '../support/webhooks.ts';
import { createLiveFeed } from '../../src/api/live-feed.ts';
import { SubscriptionGate } from '../../src/api/subscription-gate.ts';
import { pushSideOf } from '../../src/kernel/async-streams.ts';
import { createMetrics } from '../../src/platform/http/metrics.ts';

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

let stack: Stack;
const clients: Client[] = [];
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await stack.close();
});

const client = (key?: string) => {
  const created = wsClient(stack.api.url, key);
  clients.push(created);
  return created;
};

type Shop = Awaited<ReturnType<typeof merchantWithSandbox>>;

/** A card payment authorized, then captured: two events (payment_authorized, payment_succeeded). */
async function pay(shop: Shop): Promise<string> {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1500, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }));
  dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id } }));
  return created.id;
}

/** The merchant's event ids, oldest first, as the events query lists them. */
async function eventIdsOldestFirst(shop: Shop): Promise<string[]> {
  const { events } = dataOf(await shop.secret(EventsDocument, { first: 100 }));
  return events.edges.map((edge) => edge.node.id).reverse();
}

/** Waits until the subscription to `shop`'s events is in effect: it only sees later commits. */
const live = (shop: { merchantId: string }) => untilLive(stack.env, liveChannel.events(shop.merchantId));
/** Time for anything more to arrive, before a check that nothing did. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 150));

describe('paymentEvents', () => {
  it('streams the profile’s events as they are created, in order', async () => {
    const shop = await merchantWithSandbox(stack);
    const watched = subscribeWs(client(shop.secretKey), PaymentEventsDocument, { profileId: shop.profileId });
    await live(shop);
    const paymentId = await pay(shop);
    const seen = (await watched.waitFor(2)).map((result) => result.paymentEvents);
    expect(seen.map((event) => [event.eventType, event.objectId])).toEqual([
      ['PAYMENT_AUTHORIZED', paymentId],
      ['PAYMENT_SUCCEEDED', paymentId],
    ]);
    expect(seen[1]!.objectVersion).toBeGreaterThan(seen[0]!.objectVersion);
    watched.close();
  });

  it('resolves a field with a scope of its own on every event, for every subscriber sharing the execution', async () => {
    // Scope-auth's memo of a subscriber's scopes is let go once it has subscribed (src/api/shared-execution.ts); a
    // field checked per event (Event.deliveryHeaders: secret key) must still be answered, for each of them.
    const shop = await merchantWithSandbox(stack);
    const watching = [client(shop.secretKey), client(shop.secretKey)].map((each) =>
      subscribeWs(each, PaymentEventsSignedDocument, { profileId: shop.profileId }),
    );
    await live(shop);
    await pay(shop);
    for (const watched of watching) {
      const seen = (await watched.waitFor(2)).map((result) => result.paymentEvents);
      expect(watched.errors).toEqual([]);
      for (const event of seen) expect(event.deliveryHeaders.map((header) => header.name)).toContain('webhook-signature');
      watched.close();
    }
  });

  it('catches up from `after`, then goes on live: nothing missed, nothing repeated, even with payments made at the seam', async () => {
    const shop = await merchantWithSandbox(stack);
    await pay(shop);
    await pay(shop);
    const [after] = await eventIdsOldestFirst(shop);
    // Payments keep happening while the subscriber reconnects: some commit before, some during, some after the catch-up.
    const during = Promise.all([pay(shop), pay(shop), pay(shop)]);
    const watched = subscribeWs(client(shop.secretKey), PaymentEventsDocument, { profileId: shop.profileId, after });
    await during;
    await live(shop);
    await pay(shop);
    const expected = (await eventIdsOldestFirst(shop)).slice(1);
    expect(expected).toHaveLength(11); // 12 events (6 payments), all but the first
    const seen = (await watched.waitFor(expected.length)).map((result) => result.paymentEvents.id);
    await quiet();
    expect(watched.results).toHaveLength(expected.length); // no repeats came after
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...expected].sort());
    watched.close();
  });

  it('filters by event type and leaves other profiles’ events out', async () => {
    const shop = await merchantWithSandbox(stack);
    const watched = subscribeWs(client(shop.secretKey), PaymentEventsDocument, { profileId: shop.profileId, eventTypes: ['PAYMENT_SUCCEEDED'] });
    const stranger = await merchantWithSandbox(stack);
    await live(shop);
    await pay(stranger);
    const paymentId = await pay(shop);
    const seen = await watched.waitFor(1);
    await quiet();
    expect(watched.results.map((result) => [result.paymentEvents.eventType, result.paymentEvents.objectId])).toEqual([['PAYMENT_SUCCEEDED', paymentId]]);
    expect(seen).toHaveLength(1);
    watched.close();
  });

  it('is for the secret key of the profile’s merchant only, and names a bad argument', async () => {
    const shop = await merchantWithSandbox(stack);
    const stranger = await merchantWithSandbox(stack);
    const cases = [
      { key: shop.publishableKey, variables: { profileId: shop.profileId }, code: 'FORBIDDEN' },
      { key: stranger.secretKey, variables: { profileId: shop.profileId }, code: 'NOT_FOUND' },
      { key: shop.secretKey, variables: { profileId: 'not-a-profile' }, code: 'INVALID_INPUT' },
      { key: shop.secretKey, variables: { profileId: shop.profileId, after: 'evt_DoesNotExist000000000000' }, code: 'NOT_FOUND' },
    ];
    for (const { key, variables, code } of cases) {
      const refused = subscribeWs(client(key), PaymentEventsDocument, variables);
      const errors = await refused.waitForError();
      expect(
        errors.map((error) => error.extensions?.code),
        JSON.stringify(errors),
      ).toEqual([code]);
    }
  });

  it('ends when its key is revoked', async () => {
    const shop = await merchantWithSandbox(stack);
    const { key, apiKey } = dataOf(await shop.secret(CreateApiKeyDocument, { input: { name: 'dashboard', type: 'SECRET' } })).createApiKey;
    const watched = subscribeWs(client(key), PaymentEventsDocument, { profileId: shop.profileId });
    await live(shop);
    await pay(shop);
    await watched.waitFor(2);
    dataOf(await shop.secret(RevokeApiKeyDocument, { input: { keyId: apiKey.id } }));
    const errors = await watched.waitForError(5_000);
    expect(errors.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    expect(errors[0]!.message).toMatch(/revoked/);
    await pay(shop);
    await quiet();
    expect(watched.results).toHaveLength(2);
  });
});

describe('a live event', () => {
  it('is the row as its insert wrote it, field for field: nothing is read back, so no delivery shows yet', async () => {
    const withoutEndpoint = await merchantWithSandbox(stack); // its events stay NOT_SENT, as they were written
    const receiving = await shopWithReceiver(stack); // its events are written PENDING, then delivered
    for (const shop of [withoutEndpoint, receiving]) {
      const watched = subscribeWs(client(shop.secretKey), PaymentEventsWholeDocument, { profileId: shop.profileId });
      await live(shop);
      await paidPayment(shop);
      const [seen] = (await watched.waitFor(1)).map((result) => result.paymentEvents);
      const stored = dataOf(await shop.secret(EventDocument, { id: seen!.id })).event;
      const asWritten =
        shop === receiving ? { deliveryStatus: 'PENDING', nextAttemptAt: stored.createdAt, attemptCount: 0, deliveredAt: null, attempts: [] } : {};
      expect(seen).toEqual({ ...stored, ...asWritten });
      watched.close();
    }
  });
});

describe('paymentEvents over graphql-ws without `after`', () => {
  it('is pushed from the live feed through the gate by plain calls (docs/subscriptions.md, "Fan-out"); with `after` it is iterated', async () => {
    const shop = await merchantWithSandbox(stack);
    const { config, logger } = stack.api.context;
    const live = createLiveFeed(config, logger);
    const gate = new SubscriptionGate(config, stack.api.services, logger, createMetrics());
    try {
      const principal = { kind: 'secretKey', merchantId: shop.merchantId, mode: 'TEST', keyId: 'key_push_test' } as const;
      const watched = gate.open(principal, await stack.api.services.events.watch(principal, { profileId: shop.profileId }, live));
      const attach = pushSideOf<{ id: string; eventType: string; objectId: string }>(watched);
      expect(attach).toBeDefined();
      const pushed: { id: string; eventType: string; objectId: string }[] = [];
      const detach = attach!({ next: (value) => pushed.push(value), end: () => {} });
      await live.subscribed();
      const paymentId = await pay(shop);
      await vi.waitFor(() => expect(pushed).toHaveLength(2));
      expect(pushed.map((event) => [event.eventType, event.objectId])).toEqual([
        ['payment_authorized', paymentId],
        ['payment_succeeded', paymentId],
      ]);
      detach();

      const [after] = await eventIdsOldestFirst(shop);
      expect(pushSideOf(await stack.api.services.events.watch(principal, { profileId: shop.profileId, after }, live))).toBeUndefined();
    } finally {
      gate.close();
      await live.close();
    }
  });
});
