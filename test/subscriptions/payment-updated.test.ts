// paymentUpdated with real clients: graphql-ws over a WebSocket and Server-Sent Events, against real API
// processes sharing Redis pub/sub, while payments move through the sandbox processor.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from 'graphql-ws';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentUpdatedDocument, PaymentUpdatedEmailDocument } from '../gql/graphql.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createLiveFeed } from '../../src/api/live-feed.ts';
import { startTestApi, testEnv, type TestApi } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { liveChannel, openSubscriptions, subscribeSse, subscribeWs, untilLive, wsClient } from '../support/subscriptions.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

let stack: Stack;
/** A second API process (same database, same Redis prefix): what a load balancer would spread clients over. */
let otherApi: TestApi;
const clients: Client[] = [];
beforeAll(async () => {
  stack = await startStack();
  otherApi = await startTestApi(stack.env);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await otherApi.close();
  await stack.close();
});

const client = (apiUrl: string, key?: string) => {
  const created = wsClient(apiUrl, key);
  clients.push(created);
  return created;
};

async function createdPayment(shop: Awaited<ReturnType<typeof merchantWithSandbox>>) {
  return dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2500, currency: 'USD', returnUrl: 'https://shop.example/back' } })).createPayment;
}

/** Waits until the subscription to `paymentId`'s changes is in effect: it only sees later commits. */
const live = (paymentId: string) => untilLive(stack.env, liveChannel.payment(paymentId));

describe('paymentUpdated over graphql-ws', () => {
  it('shows every transition of a 3DS payment, in order, with rising versions', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = await createdPayment(shop);
    const watched = subscribeWs(client(stack.api.url, shop.publishableKey), PaymentUpdatedDocument, {
      paymentId: payment.id,
      clientSecret: payment.clientSecret,
    });
    await live(payment.id);
    const confirmed = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4000002500003155') } }),
    ).confirmPayment;
    expect(confirmed.status).toBe('REQUIRES_CUSTOMER_ACTION');
    const challenge = confirmed.nextAction!.redirectToUrl!;
    await fetch(challenge);
    const submitted = await fetch(`${challenge}/complete`, { method: 'POST', redirect: 'manual' });
    await fetch(submitted.headers.get('location')!, { redirect: 'manual' }); // back through our redirect route: a sync
    // Every committed change comes, the attempt's own steps too (device data, then the challenge), so
    // the payment's status may repeat; its distinct statuses come in order, and it ends SUCCEEDED.
    await vi.waitFor(() => expect(watched.results.at(-1)?.paymentUpdated.status).toBe('SUCCEEDED'), { timeout: 10_000, interval: 20 });
    const updates = watched.results.map((result) => result.paymentUpdated);
    const statuses = updates.map((update) => update.status).filter((status, index, all) => status !== all[index - 1]);
    expect(statuses).toEqual(['PROCESSING', 'REQUIRES_CUSTOMER_ACTION', 'SUCCEEDED']);
    for (let index = 1; index < updates.length; index += 1) {
      expect(updates[index]!.version).toBeGreaterThan(updates[index - 1]!.version);
      expect(Date.parse(updates[index]!.updated)).toBeGreaterThanOrEqual(Date.parse(updates[index - 1]!.updated));
    }
    expect(updates.at(-1)).toMatchObject({ id: payment.id, amountReceived: 2500, activeAttempt: { status: 'CHARGED' } });
    watched.close();
  });

  it('shows each subscriber what its own key may see, though subscribers of the same selection share one execution', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 2500, currency: 'USD', email: 'ada@example.com', returnUrl: 'https://shop.example/back' } }),
    ).createPayment;
    // Two secret-key subscribers (one execution serves both) and a checkout's, whose key may not see the email: the same
    // document and variables, so only the key's scope tells them apart.
    const variables = { paymentId: payment.id, clientSecret: payment.clientSecret };
    // The API's open-subscription count is this test's alone once the earlier tests' are closed.
    await vi.waitFor(async () => expect(await openSubscriptions(stack.api)).toBe(0), { timeout: 10_000, interval: 10 });
    const secret = [1, 2].map(() => subscribeWs(client(stack.api.url, shop.secretKey), PaymentUpdatedEmailDocument, variables));
    const checkout = subscribeWs(client(stack.api.url, shop.publishableKey), PaymentUpdatedEmailDocument, variables);
    // The channel's first subscriber is in effect, and each of the three has run its subscribe resolver.
    await live(payment.id);
    await vi.waitFor(async () => expect(await openSubscriptions(stack.api)).toBe(3), { timeout: 10_000, interval: 10 });
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') } }));
    for (const watched of [...secret, checkout])
      await vi.waitFor(() => expect(watched.results.at(-1)?.paymentUpdated.status).toBe('SUCCEEDED'), { timeout: 10_000, interval: 20 });
    for (const watched of secret) expect(watched.results.map((result) => result.paymentUpdated.email)).toEqual(secret[0]!.results.map(() => 'ada@example.com'));
    expect(checkout.results.map((result) => result.paymentUpdated.email)).toEqual(checkout.results.map(() => null));
    expect(secret[1]!.results).toEqual(secret[0]!.results);
    for (const watched of [...secret, checkout]) watched.close();
  });

  it('resolves each update from the state its commit wrote, though the payment has moved on since', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = await createdPayment(shop);
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') } }));
    // Another process's live feed.
    const publisher = createLiveFeed(loadConfig(testEnv(stack.env)), createLogger('silent'));
    const watched = subscribeWs(client(stack.api.url, shop.secretKey), PaymentUpdatedDocument, { paymentId: payment.id });
    await live(payment.id);
    // The confirm's first commit (PROCESSING, its attempt PENDING), published late: the payment is
    // SUCCEEDED by now, and the update must still show the attempt of its own commit.
    const charged = (await stack.api.services.payments.store.find(payment.id))!;
    try {
      // Published again until it arrives: a publication before the feed's connection is up is dropped, as a real
      // process's would be (its subscribers then catch up from the database).
      const late = await vi.waitFor(
        () => {
          if (watched.results.length === 0)
            publisher.paymentChanged({ ...charged, status: 'PROCESSING', version: 2, activeAttempt: { ...charged.activeAttempt, status: 'PENDING' } });
          expect(watched.results).not.toEqual([]);
          return watched.results[0];
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(late!.paymentUpdated).toMatchObject({ status: 'PROCESSING', version: 2, activeAttempt: { status: 'PENDING' } });
    } finally {
      await publisher.close();
      watched.close();
    }
  });

  it('reaches a subscriber on another API process than the one the payment is confirmed on', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = await createdPayment(shop);
    const watched = subscribeWs(client(otherApi.url, shop.secretKey), PaymentUpdatedDocument, { paymentId: payment.id });
    await live(payment.id);
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') } }));
    const seen = await watched.waitFor(2);
    expect(seen.map((result) => result.paymentUpdated.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
    watched.close();
  });

  it('refuses a publishable key without the client secret or with another payment’s, another merchant’s key, and no key', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = await createdPayment(shop);
    const other = await createdPayment(shop);
    const stranger = await merchantWithSandbox(stack);
    const cases = [
      { key: shop.publishableKey, variables: { paymentId: payment.id }, code: 'FORBIDDEN' },
      { key: shop.publishableKey, variables: { paymentId: payment.id, clientSecret: other.clientSecret }, code: 'FORBIDDEN' },
      { key: stranger.secretKey, variables: { paymentId: payment.id }, code: 'NOT_FOUND' },
      { key: undefined, variables: { paymentId: payment.id }, code: 'UNAUTHENTICATED' },
      { key: 'sk_test_not_a_real_key_000000000000', variables: { paymentId: payment.id }, code: 'UNAUTHENTICATED' },
    ];
    for (const { key, variables, code } of cases) {
      const refused = subscribeWs(client(stack.api.url, key), PaymentUpdatedDocument, variables);
      const errors = await refused.waitForError();
      expect(
        errors.map((error) => error.extensions?.code),
        JSON.stringify(errors),
      ).toEqual([code]);
      expect(refused.results).toEqual([]);
    }
  });

  it('applies the HTTP limits through Yoga’s envelop: a query over GRAPHQL_MAX_TOKENS is refused before it runs', async () => {
    const shop = await merchantWithSandbox(stack);
    const huge = `subscription { paymentUpdated(paymentId: "pay_x") { ${'id '.repeat(6000)} } }`;
    const refused = subscribeWs(client(stack.api.url, shop.secretKey), { toString: () => huge } as never, {});
    const errors = await refused.waitForError();
    expect(errors[0]?.message).toMatch(/token/i);
  });
});

describe('paymentUpdated over Server-Sent Events', () => {
  it('streams the payment’s transitions to an HTTP client', async () => {
    const shop = await merchantWithSandbox(stack);
    const payment = await createdPayment(shop);
    const watched = subscribeSse(stack.api.url, shop.secretKey, PaymentUpdatedDocument, { paymentId: payment.id });
    await live(payment.id);
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') } }));
    const seen = await watched.waitFor(2);
    expect(seen.map((result) => result.paymentUpdated.status)).toEqual(['PROCESSING', 'SUCCEEDED']);
    watched.close();
  });
});

describe('the live feed’s channels', () => {
  it('publish a payment’s creation to dashboards only, and each later change on the payment’s own channel too', async () => {
    const config = loadConfig(testEnv(stack.env));
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
    const seen: { channel: 'payment' | 'profile'; id: string; status: string }[] = [];
    redis.on('pmessage', (_pattern: string, channel: string, message: string) => {
      const { id, status } = JSON.parse(message) as { id: string; status: string };
      seen.push({ channel: channel.startsWith(`${config.REDIS_PREFIX}:${liveChannel.payment('')}`) ? 'payment' : 'profile', id, status });
    });
    try {
      await redis.psubscribe(`${config.REDIS_PREFIX}:${liveChannel.payment('*')}`, `${config.REDIS_PREFIX}:${liveChannel.profilePayments('*')}`);
      const shop = await merchantWithSandbox(stack);
      const payment = await createdPayment(shop);
      dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') } }));
      const statuses = (channel: 'payment' | 'profile') => seen.filter((item) => item.channel === channel && item.id === payment.id).map((item) => item.status);
      // One publisher connection sends them all, in order: once the last has come, any creation would have come before it.
      await vi.waitFor(() => expect(statuses('payment').at(-1)).toBe('SUCCEEDED'), { timeout: 10_000, interval: 10 });
      expect(statuses('payment')).toEqual(['PROCESSING', 'SUCCEEDED']);
      await vi.waitFor(() => expect(statuses('profile')).toEqual(['REQUIRES_PAYMENT_METHOD', 'PROCESSING', 'SUCCEEDED']), { timeout: 10_000, interval: 10 });
    } finally {
      redis.disconnect();
    }
  });
});
