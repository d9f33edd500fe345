// Routing's Redis connected but silent (docs/routing.md, What counts, and where it is kept): every routing read
// and write gives up after ROUTING_REDIS_TIMEOUT_MS, so a confirm still routes, authorizes and saves the
// processor's answer instead of waiting on Redis with an authorized payment left pending. The silence is a proxy
// that keeps its connections open and stops passing anything on, in front of a Redis of this test's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePaymentDocument, PaymentRoutingDocument } from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

let redis: OwnRedis;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;

beforeAll(async () => {
  redis = await startOwnRedis();
  proxy = await tcpProxy(Number(new URL(redis.url).port));
  stack = await startStack({ worker: false, env: { ROUTING_REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
  shop = await createMerchant(stack.api);
  await addConnectorAccount(stack, shop, 'sandbox');
});
afterAll(async () => {
  await stack?.close();
  await proxy?.close();
  await redis?.stop();
});

async function pay() {
  const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
  const input = { amount: 1000, currency: 'EUR', confirm: true, paymentMethodData: { card } };
  const { id } = dataOf(await shop.secret(CreatePaymentDocument, { input })).createPayment;
  return dataOf(await shop.secret(PaymentRoutingDocument, { id })).payment!;
}

describe('a routing Redis that stops answering', () => {
  it('costs a confirm its signals, never the processor answer', async () => {
    expect((await pay()).routing!.reason).not.toContain('could not be read');
    proxy.silence();
    const payment = await pay();
    expect(payment.status).toBe('SUCCEEDED');
    expect(payment.routing!.reason).toMatch(/Connector health and success rates could not be read, so none counted\.$/);
  });
});
