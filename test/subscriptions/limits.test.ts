// The subscription gate, through both transports: bounds per key that concurrent subscribes cannot
// overshoot (a checkout's counted per client secret and per client IP instead), slots given back when
// streams end (early or late), revocation ending SSE streams too, and a reader that stops reading cut off
// instead of growing the server's memory.
import { Repeater } from '@repeaterjs/repeater';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SubscriptionGate, MAX_UNREAD_RESULTS } from '../../src/api/subscription-gate.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { CreateApiKeyDocument, CreatePaymentDocument, PaymentEventsDocument, PaymentUpdatedDocument, RevokeApiKeyDocument } from '../gql/graphql.ts';
import { startTestApi, type TestApi } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { liveChannel, openSubscriptions, subscribeSse, subscribeWs, untilLive, wsClient, type Collected } from '../support/subscriptions.ts';
import { createMetrics } from '../../src/platform/http/metrics.ts';

const PER_KEY = 3;
const PER_CLIENT_SECRET = 2;
const PER_CLIENT_IP = 5;
let stack: Stack;
/** An API process with a small per-key bound. */
let api: TestApi;
const clients: Client[] = [];
beforeAll(async () => {
  stack = await startStack();
  api = await startTestApi({
    ...stack.env,
    SUBSCRIPTIONS_PER_KEY: String(PER_KEY),
    SUBSCRIPTIONS_PER_CLIENT_SECRET: String(PER_CLIENT_SECRET),
    SUBSCRIPTIONS_PER_CLIENT_IP: String(PER_CLIENT_IP),
  });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.dispose()));
  await api.close();
  await stack.close();
});

/** Time for a refusal to arrive (it comes at once), before a check that none did. */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 300));
const outcome = (subscription: Collected<unknown>) => subscription.errors.map((error) => error.extensions?.code)[0] ?? 'OPEN';

describe('per-key bounds', () => {
  it('let exactly the bound through when 20 subscribe at once, and give slots back when streams end', async () => {
    const shop = await merchantWithSandbox(stack);
    const client = wsClient(api.url, shop.secretKey);
    clients.push(client);
    const many = Array.from({ length: 20 }, () => subscribeWs(client, PaymentEventsDocument, { profileId: shop.profileId }));
    await vi.waitFor(() => expect(many.filter((subscription) => subscription.errors.length > 0)).toHaveLength(20 - PER_KEY), { timeout: 5_000 });
    await quiet();
    const outcomes = many.map(outcome);
    expect(outcomes.filter((code) => code === 'OPEN')).toHaveLength(PER_KEY);
    expect(outcomes.filter((code) => code === 'RATE_LIMITED')).toHaveLength(20 - PER_KEY);
    // Ending the open ones (never fed an event) frees their slots at once.
    for (const subscription of many) subscription.close();
    await vi.waitFor(async () => expect(await openSubscriptions(api)).toBe(0), { timeout: 5_000, interval: 10 });
    const again = Array.from({ length: PER_KEY }, () => subscribeWs(client, PaymentEventsDocument, { profileId: shop.profileId }));
    await quiet();
    expect(again.map(outcome)).toEqual(Array.from({ length: PER_KEY }, () => 'OPEN'));
    for (const subscription of again) subscription.close();
  });

  it('count SSE subscriptions too', async () => {
    const shop = await merchantWithSandbox(stack);
    const streams = Array.from({ length: PER_KEY + 2 }, () => subscribeSse(api.url, shop.secretKey, PaymentEventsDocument, { profileId: shop.profileId }));
    await vi.waitFor(() => expect(streams.filter((stream) => stream.errors.length > 0)).toHaveLength(2), { timeout: 5_000 });
    expect(streams.flatMap((stream) => stream.errors.map((error) => error.extensions?.code))).toEqual(['RATE_LIMITED', 'RATE_LIMITED']);
    for (const stream of streams) stream.close();
  });
});

describe('a checkout’s subscriptions (publishable key)', () => {
  it('count per client secret and per client IP, not per publishable key, so one payer cannot use up the merchant’s', async () => {
    const shop = await merchantWithSandbox(stack);
    const [first, second, third] = await Promise.all(
      [1, 2, 3].map(async () => dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 500, currency: 'EUR' } })).createPayment),
    );
    const payer = wsClient(api.url, shop.publishableKey, '127.0.2.1');
    const otherPayer = wsClient(api.url, shop.publishableKey, '127.0.2.2');
    clients.push(payer, otherPayer);
    const watch = (client: Client, payment: typeof first, count: number) =>
      Array.from({ length: count }, () => subscribeWs(client, PaymentUpdatedDocument, { paymentId: payment!.id, clientSecret: payment!.clientSecret }));
    const refusedOf = async (subscriptions: Collected<unknown>[], refused: number) => {
      await vi.waitFor(() => expect(subscriptions.filter((subscription) => subscription.errors.length > 0)).toHaveLength(refused), { timeout: 5_000 });
      await quiet();
      return subscriptions.flatMap((subscription) => subscription.errors.map((error) => error.message));
    };
    // One payment: at most PER_CLIENT_SECRET.
    expect(await refusedOf(watch(payer, first, PER_CLIENT_SECRET + 1), 1)).toEqual([
      `At most ${PER_CLIENT_SECRET} subscriptions per client secret on one server.`,
    ]);
    // Another payment of the same key is not refused, though the key now holds more than PER_KEY.
    expect(await refusedOf(watch(payer, second, PER_CLIENT_SECRET), 0)).toEqual([]);
    // One address: at most PER_CLIENT_IP (4 held, so 1 more); another address is not affected.
    expect(await refusedOf(watch(payer, third, 2), 1)).toEqual([
      `At most ${PER_CLIENT_IP} subscriptions with a publishable key per client address on one server.`,
    ]);
    expect(await refusedOf(watch(otherPayer, third, 1), 0)).toEqual([]);
  });
});

describe('revocation', () => {
  it('ends SSE streams of a revoked key', async () => {
    const shop = await merchantWithSandbox(stack);
    const { key, apiKey } = dataOf(await shop.secret(CreateApiKeyDocument, { input: { name: 'wallboard', type: 'SECRET' } })).createApiKey;
    const stream = subscribeSse(stack.api.url, key, PaymentEventsDocument, { profileId: shop.profileId });
    await untilLive(stack.env, liveChannel.events(shop.merchantId)); // running: a refused subscribe would end the same way
    dataOf(await shop.secret(RevokeApiKeyDocument, { input: { keyId: apiKey.id } }));
    const errors = await stream.waitForError(5_000);
    expect(errors.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    stream.close();
  });
});

describe('a reader that stops reading', () => {
  it('is cut off with a retryable error once it leaves more than MAX_UNREAD_RESULTS unread', async () => {
    const gate = new SubscriptionGate(stack.api.context.config, stack.api.services, createLogger('silent'), createMetrics());
    let produced = 0;
    let sourceEnded = false;
    // A busy feed: values as fast as they are taken, until the gate stops taking them.
    const source = new Repeater<number>(async (push, stop) => {
      let stopped = false;
      void stop.then(() => (stopped = true));
      for (let value = 0; value < 10 * MAX_UNREAD_RESULTS && !stopped; value += 1) {
        produced += 1;
        await push(value);
      }
      await stop;
      sourceEnded = true;
    });
    const stream = gate.open({ kind: 'secretKey', merchantId: 'mer_x', mode: 'TEST', keyId: 'key_slow' }, source)[Symbol.asyncIterator]();
    expect(await stream.next()).toEqual({ done: false, value: 0 }); // then the reader stops reading
    await vi.waitFor(() => expect(sourceEnded).toBe(true));
    // The source was drained only as far as the bound, then ended; the reader gets what was buffered, then the error.
    expect(produced).toBeLessThanOrEqual(MAX_UNREAD_RESULTS + 3);
    let error: unknown;
    try {
      for (;;) if ((await stream.next()).done) break;
    } catch (caught) {
      error = caught;
    }
    expect((error as { code?: string }).code).toBe('RATE_LIMITED');
    gate.close();
  });
});
