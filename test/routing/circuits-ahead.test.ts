// Routing's circuits read ahead (docs/routing.md, "Connector health"): a confirm reads its merchant's circuits while
// it reads the payment, and a createPayment with confirm while it writes it, so the decision reads none of its own
// unless it comes more than 50 ms (of the routing clock) after the read. Every circuit read is seen on a Redis of the
// test's own (MONITOR): a read ahead names each of the merchant's enabled accounts, a read at the decision only the
// eligible ones (here the EUR account, not the USD one). That the read overlaps the payment's own read is shown by
// holding the confirm's count against its client secret (a command on the main Redis, answered with that read).
// What the decisions do with open circuits and probes is connector-health.test.ts's, through confirms.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentRoutingDocument } from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

let redis: OwnRedis;
/** A connection in MONITOR mode, and one that pings through it. */
let monitor: Redis;
let pinger: Redis;
let mainProxy: Awaited<ReturnType<typeof tcpProxy>>;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
let euro: string;
let dollar: string;
let now = Date.now();
/** The circuit reads Redis has run, each as the accounts it named (OPEN_UNTIL: one key per account). */
const circuitReads: string[][] = [];

beforeAll(async () => {
  redis = await startOwnRedis();
  monitor = await new Redis(redis.url).monitor();
  pinger = new Redis(redis.url);
  monitor.on('monitor', (_time: string, args: string[]) => {
    const [command, , keyCount, ...keys] = args;
    // The circuit's record names its failures too (routing:circuit-failures:…): only reads name circuits alone.
    if ((command === 'evalsha' || command === 'eval') && keys.length === Number(keyCount) && keys.every((key) => key.includes(':routing:circuit:'))) {
      circuitReads.push(keys.map((key) => key.slice(key.lastIndexOf(':') + 1)).sort());
    }
  });
  mainProxy = await tcpProxy(Number(new URL(redis.url).port));
  stack = await startStack({ worker: false, env: { REDIS_URL: `redis://127.0.0.1:${mainProxy.port}`, ROUTING_REDIS_URL: redis.url }, clock: () => now });
  shop = await createMerchant(stack.api);
  euro = (await addConnectorAccount(stack, shop, 'sandbox', { currencies: ['EUR'] })).account.id;
  dollar = (await addConnectorAccount(stack, shop, 'sandbox', { currencies: ['USD'] })).account.id;
});
afterAll(async () => {
  await stack?.close();
  await mainProxy?.close();
  monitor?.disconnect();
  pinger?.disconnect();
  await redis?.stop();
});

const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };

/** The circuit reads of `pay`, once MONITOR has passed on every command it sent (a PING after them comes after them). */
async function readsOf(pay: () => Promise<void>): Promise<string[][]> {
  const before = circuitReads.length;
  await pay();
  const seen = new Promise((resolve) =>
    monitor.on('monitor', function heard(_time: string, args: string[]) {
      if (args[0] !== 'ping') return;
      monitor.off('monitor', heard);
      resolve(undefined);
    }),
  );
  await pinger.ping();
  await seen;
  return circuitReads.slice(before);
}

async function routingOf(id: string) {
  return dataOf(await shop.secret(PaymentRoutingDocument, { id })).payment!;
}

/**
 * Creates a payment and confirms it (publishable key) while its count against the client secret is held, until the
 * circuits have been read once meanwhile; `whileHeld` runs then, before the count goes on. Answers the payment's id.
 */
async function confirmHoldingTheCount(whileHeld: () => void = () => {}): Promise<string> {
  const { id, clientSecret } = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'EUR' } })).createPayment;
  const before = circuitReads.length;
  const counting = mainProxy.holdFrom(/rate:confirmsPerClientSecret/);
  const confirming = shop.publishable(ConfirmPaymentDocument, { input: { clientSecret, paymentMethodData: { card } } });
  await counting.reached;
  // The count is held, so the confirm has not gone past its reads: a circuit read now was sent ahead of the decision.
  await expect.poll(() => circuitReads.length, { timeout: 10_000 }).toBe(before + 1);
  whileHeld();
  counting.release();
  expect(dataOf(await confirming).confirmPayment.status).toBe('SUCCEEDED');
  return id;
}

describe('routing’s circuits', () => {
  it('are read by a confirm while it reads the payment, and its decision reads none of its own', async () => {
    let id = '';
    const reads = await readsOf(async () => {
      id = await confirmHoldingTheCount();
    });
    expect(reads).toEqual([[dollar, euro].sort()]);
    const payment = await routingOf(id);
    expect(payment.routing!.chosen).toEqual({ id: euro });
    expect(payment.routing!.reason).not.toContain('could not be read');
  });

  it('are read by a createPayment with confirm while it writes the payment', async () => {
    let id = '';
    const reads = await readsOf(async () => {
      const input = { amount: 1000, currency: 'EUR', confirm: true, paymentMethodData: { card } };
      ({ id } = dataOf(await shop.secret(CreatePaymentDocument, { input })).createPayment);
    });
    expect(reads).toEqual([[dollar, euro].sort()]);
    expect((await routingOf(id)).status).toBe('SUCCEEDED');
  });

  it('are read again by a decision more than 50 ms after the read ahead', async () => {
    const reads = await readsOf(async () => {
      await confirmHoldingTheCount(() => (now += 51));
    });
    expect(reads).toEqual([[dollar, euro].sort(), [euro]]);
  });
});
