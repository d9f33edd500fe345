// Routing fails open (docs/routing.md, What counts, and where it is kept): with Redis unreachable, connector
// health and success rates cannot be read or recorded, and a payment is still routed by its algorithm, as if
// every circuit were closed, its reason saying so; connectorAccounts { health } is null meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorHealthDocument, CreatePaymentDocument, PaymentRoutingDocument } from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { setAlgorithm } from '../support/routing.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';

let redis: OwnRedis;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
let fauxpay: string;

beforeAll(async () => {
  redis = await startOwnRedis();
  stack = await startStack({ worker: false, env: { REDIS_URL: redis.url } });
  shop = await createMerchant(stack.api);
  await addConnectorAccount(stack, shop, 'sandbox');
  fauxpay = (await addConnectorAccount(stack, shop, 'fauxpay')).account.id;
  await setAlgorithm(shop, { successRate: { connectorAccountIds: [fauxpay] } });
});
afterAll(async () => {
  await stack?.close();
  await redis?.stop();
});

/** A payment created and confirmed in one call with the secret key, and its routing decision. */
async function pay() {
  const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
  const { id } = dataOf(
    await shop.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'EUR', confirm: true, paymentMethodData: { card } } }),
  ).createPayment;
  return dataOf(await shop.secret(PaymentRoutingDocument, { id })).payment!;
}

describe('routing while Redis is unreachable', () => {
  it('still routes payments by the algorithm, saying the signals could not be read, and reads them again once Redis is back', async () => {
    expect((await pay()).routing!.reason).not.toContain('could not be read');
    await redis.stop();
    const payment = await pay();
    expect(payment.status).toBe('SUCCEEDED');
    expect(payment.routing).toMatchObject({ algorithm: 'SUCCESS_RATE', chosen: { id: fauxpay } });
    expect(payment.routing!.reason).toMatch(/Connector health and success rates could not be read, so none counted\.$/);
    const accounts = dataOf(await shop.secret(ConnectorHealthDocument, {})).connectorAccounts;
    expect(accounts.map((account) => account.health)).toEqual([null, null]);

    await redis.start();
    // ioredis reconnects by itself; until it has, payments keep routing without the signals.
    let reason = '';
    for (let tries = 0; tries < 100 && (reason === '' || reason.includes('could not be read')); tries += 1) {
      reason = (await pay()).routing!.reason;
      if (reason.includes('could not be read')) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(reason).not.toContain('could not be read');
  });
});
