// Routing's Redis connected but silent (docs/routing.md, What counts, and where it is kept): every routing read
// and write gives up after ROUTING_REDIS_TIMEOUT_MS, so a confirm still routes, authorizes and saves the
// processor's answer instead of waiting on Redis with an authorized payment left pending. The silence is a proxy
// that keeps its connections open and stops passing anything on, in front of a Redis of this test's own. And a
// Redis that is slow, not silent: the outcome's record goes beside the answer's save, which never waits for it,
// while the confirm answers only once it is recorded.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentRoutingDocument } from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

let redis: OwnRedis;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
/** A second stack whose routing Redis (through `slowProxy`) is given all the time it needs: ROUTING_REDIS_TIMEOUT_MS 10 s. */
let slowProxy: Awaited<ReturnType<typeof tcpProxy>>;
let patientStack: Stack;

beforeAll(async () => {
  redis = await startOwnRedis();
  proxy = await tcpProxy(Number(new URL(redis.url).port));
  slowProxy = await tcpProxy(Number(new URL(redis.url).port));
  [stack, patientStack] = await Promise.all([
    startStack({ worker: false, env: { ROUTING_REDIS_URL: `redis://127.0.0.1:${proxy.port}` } }),
    startStack({ worker: false, env: { ROUTING_REDIS_URL: `redis://127.0.0.1:${slowProxy.port}`, ROUTING_REDIS_TIMEOUT_MS: '10000' } }),
  ]);
  shop = await createMerchant(stack.api);
  await addConnectorAccount(stack, shop, 'sandbox');
});
afterAll(async () => {
  await Promise.all([stack?.close(), patientStack?.close()]);
  await Promise.all([proxy?.close(), slowProxy?.close()]);
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

describe('a routing Redis that is slow to take an outcome', () => {
  it('does not hold the save of the processor answer, and the confirm answers once the outcome is recorded', async () => {
    const merchant = await createMerchant(patientStack.api);
    await addConnectorAccount(patientStack, merchant, 'sandbox');
    const { id, clientSecret } = dataOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'EUR' } })).createPayment;
    // The outcome's record is the first thing sent to routing's Redis that names a success-rate window.
    const recording = slowProxy.holdFrom(/routing:sr:/);
    const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
    let answered = false;
    const confirming = merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret, paymentMethodData: { card } } }).finally(() => (answered = true));
    await recording.reached;
    // The answer is saved while its record waits...
    await vi.waitFor(async () => expect(dataOf(await merchant.secret(PaymentRoutingDocument, { id })).payment!.status).toBe('SUCCEEDED'), {
      timeout: 5_000,
    });
    // ...and the confirm does not answer before it is recorded.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    recording.release();
    expect(dataOf(await confirming).confirmPayment.status).toBe('SUCCEEDED');
  });
});
