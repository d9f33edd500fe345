// The Adyen connector end to end: our GraphQL API (ADYEN_CHECKOUT_API_BASE at the fake), Adyen's test cards and
// holder names, its notifications signed with the official library. Every request the connector sends is
// validated by the fake against Adyen's Checkout API v71 document; one that does not validate fails the test.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CancelPaymentDocument,
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreateConnectorAccountDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  PaymentDocument,
  RefundDocument,
  SyncPaymentDocument,
  type CreatePaymentInput,
} from '../gql/graphql.ts';
import { REDIRECT_CARD, startAdyenFake, type AdyenFake } from '../fakes/adyen/server.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';

const HMAC_KEY = randomBytes(32).toString('hex').toUpperCase();
const TIMEOUT_MS = 1500;

let fake: AdyenFake;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
let accountId: string;
beforeAll(async () => {
  fake = await startAdyenFake();
  stack = await startStack({ worker: false, env: { ADYEN_CHECKOUT_API_BASE: fake.url, CONNECTOR_TIMEOUT_MS: String(TIMEOUT_MS) } });
  shop = await createMerchant(stack.api);
  const credentials = { apiKey: `AQE${randomBytes(24).toString('hex')}`, merchantAccount: 'TestMerchant' };
  const account = dataOf(
    await shop.secret(CreateConnectorAccountDocument, { input: { connectorName: 'adyen', credentials, webhookSecret: HMAC_KEY } }),
  ).createConnectorAccount;
  accountId = account.id;
  fake.notifyTo(`${stack.api.url}/webhooks/${shop.merchantId}/${account.id}`, HMAC_KEY);
});
afterAll(async () => {
  await stack?.close();
  await fake?.close();
});
afterEach(() => {
  // Every request the connector sent follows Adyen's published definition.
  expect(fake.invalid).toEqual([]);
});

const card = (number: string, holderName?: string) => ({
  card: { number, expiryMonth: 3, expiryYear: new Date().getUTCFullYear() + 2, cvc: '737', ...(holderName ? { holderName } : {}) },
});

async function confirm(number: string, options: { holderName?: string; input?: Partial<CreatePaymentInput> } = {}) {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2500, currency: 'EUR', ...options.input } })).createPayment;
  const result = await shop.publishable(ConfirmPaymentDocument, {
    input: { clientSecret: created.clientSecret, paymentMethodData: card(number, options.holderName) },
  });
  return { id: created.id, result };
}

const paymentOf = async (id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment;

describe('Adyen card payments', () => {
  it('an authorised card succeeds, sent with our attempt id as reference and Idempotency-Key; its AUTHORISATION changes nothing more', async () => {
    const { id, result } = await confirm('4111111111111111');
    expect(dataOf(result).confirmPayment.status).toBe('SUCCEEDED');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v71/payments');
    expect(sent.idempotencyKey).toBe(sent.body.reference);
    expect(sent.body).toMatchObject({
      merchantAccount: 'TestMerchant',
      amount: { value: 2500, currency: 'EUR' },
      paymentMethod: { type: 'scheme' },
      // Captured at once whatever the merchant account's default delay: Authorised then means money taken.
      captureDelayHours: 0,
    });
    expect(sent.body.returnUrl).toMatch(new RegExp(`/payments/${id}/redirect/response/adyen\\?token=`));
    const answers = await fake.deliver();
    expect(answers).toEqual([{ status: 200, body: '[accepted]' }]);
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('a refusal is PAYMENT_DECLINED with our code and Adyen’s, each in its own field', async () => {
    const { id, result } = await confirm('4111111111111111', { holderName: 'NOT_ENOUGH_BALANCE' });
    const declined = errorOf(result, 'PAYMENT_DECLINED');
    expect(declined.extensions).toMatchObject({ declineCode: 'insufficient_funds', processorCode: '12' });
    expect(declined.extensions?.declineMessage).toBe('Not enough balance (Adyen refusalReasonCode 12)');
    const payment = await paymentOf(id);
    expect(payment).toMatchObject({ status: 'FAILED', errorCode: 'insufficient_funds', processorErrorCode: '12' });
    expect(payment.activeAttempt).toMatchObject({ errorCode: 'insufficient_funds', processorErrorCode: '12' });
  });

  it('manual capture: authorised, captured at Adyen, SUCCEEDED on its CAPTURE notification', async () => {
    const { id, result } = await confirm('5555555555554444', { input: { captureMethod: 'MANUAL' } });
    expect(dataOf(result).confirmPayment.status).toBe('REQUIRES_CAPTURE');
    await fake.deliver();
    await shop.secret(CapturePaymentDocument, { input: { paymentId: id } });
    const capture = fake.requests.at(-1)!;
    expect(capture.path).toMatch(/^\/v71\/payments\/[0-9A-F]+\/captures$/);
    expect(capture.body).toMatchObject({ merchantAccount: 'TestMerchant', amount: { value: 2500, currency: 'EUR' }, reference: capture.idempotencyKey });
    expect((await paymentOf(id)).status).not.toBe('SUCCEEDED');
    expect(await fake.deliver()).toEqual([{ status: 200, body: '[accepted]' }]);
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('partial capture: PARTIALLY_CAPTURED on its CAPTURE notification', async () => {
    const { id } = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    await fake.deliver();
    await shop.secret(CapturePaymentDocument, { input: { paymentId: id, amountToCapture: 1000 } });
    expect(fake.requests.at(-1)!.body).toMatchObject({ amount: { value: 1000, currency: 'EUR' } });
    await fake.deliver();
    expect(await paymentOf(id)).toMatchObject({ status: 'PARTIALLY_CAPTURED', amountReceived: 1000 });
  });

  it('cancel: CANCELLED on its CANCELLATION notification', async () => {
    const { id } = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    await fake.deliver();
    await shop.secret(CancelPaymentDocument, { input: { paymentId: id } });
    expect(fake.requests.at(-1)!.path).toMatch(/\/cancels$/);
    await fake.deliver();
    expect((await paymentOf(id)).status).toBe('CANCELLED');
  });

  it('refund: pending until its REFUND notification', async () => {
    const { id } = await confirm('4111111111111111');
    await fake.deliver();
    const refund = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: id, amount: 1000 } })).createRefund;
    expect(refund.status).toBe('PENDING');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toMatch(/\/refunds$/);
    expect(sent.body).toMatchObject({ reference: refund.id, amount: { value: 1000, currency: 'EUR' } });
    expect(await fake.deliver()).toEqual([{ status: 200, body: '[accepted]' }]);
    expect(dataOf(await shop.secret(RefundDocument, { id: refund.id })).refund.status).toBe('SUCCEEDED');
  });

  it('3DS: RedirectShopper is our redirect; the return’s redirectResult goes to /payments/details', async () => {
    const { id, result } = await confirm(REDIRECT_CARD, { input: { returnUrl: 'https://shop.example/done' } });
    const pending = dataOf(result).confirmPayment;
    expect(pending.status).toBe('REQUIRES_CUSTOMER_ACTION');
    const issuer = await fetch(pending.nextAction!.redirectToUrl, { redirect: 'manual' });
    const back = issuer.headers.get('location')!;
    expect(back).toContain('redirectResult=');
    const returned = await fetch(back, { redirect: 'manual' });
    expect(returned.status).toBe(302);
    expect(Object.fromEntries(new URL(returned.headers.get('location')!).searchParams)).toEqual({ payment_id: id, status: 'succeeded' });
    expect(fake.requests.at(-1)!).toMatchObject({
      path: '/v71/payments/details',
      body: { details: { redirectResult: new URL(back).searchParams.get('redirectResult') } },
    });
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('iDEAL: a redirect to the bank, completed by /payments/details on return', async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1500, currency: 'EUR' } })).createPayment;
    const pending = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: { bankRedirect: { bank: 'ideal' } } } }),
    ).confirmPayment;
    expect(fake.requests.at(-1)!.body).toMatchObject({ paymentMethod: { type: 'ideal' } });
    const bank = await fetch(pending.nextAction!.redirectToUrl, { redirect: 'manual' });
    await fetch(bank.headers.get('location')!, { redirect: 'manual' });
    expect((await paymentOf(created.id)).status).toBe('SUCCEEDED');
  });

  it('a notification moves a payment whose answer was lost; a forged one is refused', async () => {
    const { id } = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    const [authorisation] = fake.queued.splice(0);
    await shop.secret(CapturePaymentDocument, { input: { paymentId: id } });
    const [capture] = fake.queued.splice(0);
    // Out of order: the capture's news first, then the authorisation's (which changes nothing after it).
    await fake.deliver([capture!, authorisation!]);
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
    // Another key: its first hex digit changed (a random key may already start with F).
    const otherKey = `${HMAC_KEY.startsWith('F') ? 'E' : 'F'}${HMAC_KEY.slice(1)}`;
    fake.notifyTo(`${stack.api.url}/webhooks/${shop.merchantId}/${accountId}`, otherKey);
    try {
      const [forged] = await fake.deliver([{ ...capture!, eventCode: 'CANCELLATION' }]);
      expect(forged!.status).toBe(401);
    } finally {
      fake.notifyTo(`${stack.api.url}/webhooks/${shop.merchantId}/${accountId}`, HMAC_KEY);
    }
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('an authorisation whose answer timed out waits for its AUTHORISATION, found by our reference', async () => {
    fake.stallNext(TIMEOUT_MS + 500);
    const { id, result } = await confirm('4111111111111111');
    expect(dataOf(result).confirmPayment.status).toBe('PROCESSING');
    // Adyen has no status API: a sync says so, and the payment is unchanged.
    expect(errorOf(await shop.secret(SyncPaymentDocument, { input: { paymentId: id } }), 'CONNECTOR_ERROR').message).toMatch(/notifications/);
    expect(await fake.deliver()).toEqual([{ status: 200, body: '[accepted]' }]);
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('webhook registration answers that it is done in Adyen’s Customer Area', async () => {
    const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${accountId}`, {
      method: 'POST',
      headers: { 'api-key': shop.secretKey },
    });
    expect(await registered.json()).toMatchObject({ error: { message: expect.stringContaining('Customer Area') } });
  });
});
