// Retries across real processors (issue 19): each processor's decline is read as the decline catalog's code
// (docs/declines.md), whose class decides: a soft decline at one processor is sent on to the next in the profile's
// routing, a plain decline only when the profile lists its code, a hard decline never. Both processors are the local
// fakes of Stripe and Adyen, each behaving as that processor's published test cards and holder names do.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfirmPaymentDocument,
  CreateConnectorAccountDocument,
  CreatePaymentDocument,
  PaymentDocument,
  UpdateBusinessProfileDocument,
} from '../gql/graphql.ts';
import { INVALID_NUMBER_CARD, startAdyenFake, type AdyenFake } from '../fakes/adyen/server.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';

let stripe: FakeStripe;
let adyen: AdyenFake;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;

beforeAll(async () => {
  [stripe, adyen] = await Promise.all([startFakeStripe(), startAdyenFake()]);
  stack = await startStack({ worker: false, env: { STRIPE_API_BASE: stripe.url, ADYEN_CHECKOUT_API_BASE: adyen.url } });
  shop = await createMerchant(stack.api);
  for (const input of [
    { connectorName: 'stripe', credentials: { apiKey: `sk_test_${randomBytes(12).toString('hex')}` }, webhookSecret: 'whsec_cross_processor' },
    {
      connectorName: 'adyen',
      credentials: { apiKey: `AQE${randomBytes(24).toString('hex')}`, merchantAccount: 'TestMerchant' },
      webhookSecret: randomBytes(32).toString('hex'),
    },
  ]) {
    dataOf(await shop.secret(CreateConnectorAccountDocument, { input }));
  }
});
afterAll(async () => {
  await stack?.close();
  await Promise.all([stripe?.close(), adyen?.close()]);
});
afterEach(() => {
  // Every request sent to Adyen follows its published definition.
  expect(adyen.invalid).toEqual([]);
});

async function pay(routing: string[], number: string, holderName?: string, retryableDeclineCodes: string[] = []) {
  dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, routing, retryableDeclineCodes } }));
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4200, currency: 'EUR' } })).createPayment;
  const card = { number, expiryMonth: 3, expiryYear: new Date().getUTCFullYear() + 2, cvc: '737', ...(holderName ? { holderName } : {}) };
  const result = await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: { card } } });
  const payment = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
  // connector:status:our code/the processor's own
  const attempts = payment.attempts.map(
    (attempt) => `${attempt.connector}:${attempt.status}:${[attempt.errorCode, attempt.processorErrorCode].filter((code) => code !== null).join('/')}`,
  );
  return { result, payment, attempts };
}

const stripeCharges = () => stripe.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents').length;
const adyenPayments = () => adyen.requests.filter((request) => request.path === '/v71/payments').length;

describe('a payment routed to Adyen, then Stripe', () => {
  it('is sent on to Stripe after a soft decline at Adyen (issuer unavailable), and succeeds there', async () => {
    const { result, payment, attempts } = await pay(['adyen', 'stripe'], '4242424242424242', 'ISSUER_UNAVAILABLE');
    expect(dataOf(result).confirmPayment.status).toBe('SUCCEEDED');
    expect(attempts).toEqual(['adyen:FAILURE:issuer_unavailable/9', 'stripe:CHARGED:']);
    expect(payment.amountReceived).toBe(4200);
  });

  it('is not sent on after a hard decline at Adyen (fraud): Stripe is never asked', async () => {
    const before = stripeCharges();
    const { result, attempts } = await pay(['adyen', 'stripe'], '4242424242424242', 'FRAUD', ['card_declined']);
    expect(errorOf(result, 'PAYMENT_DECLINED').extensions).toMatchObject({ declineCode: 'fraudulent', processorCode: '20' });
    expect(attempts).toEqual(['adyen:AUTHORIZATION_FAILED:fraudulent/20']);
    expect(stripeCharges()).toBe(before);
  });

  it('is not sent on after Adyen refused the card number before any payment (422, errorCode 101): a hard decline, Stripe never asked', async () => {
    const before = stripeCharges();
    const { result, attempts } = await pay(['adyen', 'stripe'], INVALID_NUMBER_CARD, undefined, ['card_declined', 'unknown_decline']);
    expect(errorOf(result, 'PAYMENT_DECLINED').extensions).toMatchObject({ declineCode: 'invalid_number', processorCode: '101' });
    expect(attempts).toEqual(['adyen:AUTHORIZATION_FAILED:invalid_number/101']);
    expect(stripeCharges()).toBe(before);
  });
});

describe('a payment routed to Stripe, then Adyen', () => {
  it('is not sent on after a plain decline at Stripe (generic_decline) the profile does not list', async () => {
    const before = adyenPayments();
    const { result, attempts } = await pay(['stripe', 'adyen'], '4000000000000002');
    expect(errorOf(result, 'PAYMENT_DECLINED').extensions).toMatchObject({ declineCode: 'card_declined', processorCode: 'generic_decline' });
    expect(attempts).toEqual(['stripe:AUTHORIZATION_FAILED:card_declined/generic_decline']);
    expect(adyenPayments()).toBe(before);
  });

  it('is sent on to Adyen after a plain decline at Stripe (generic_decline) the profile lists as card_declined', async () => {
    // Adyen refuses this number too (it is none of Adyen's test cards): what matters is that it was asked.
    const { result, attempts } = await pay(['stripe', 'adyen'], '4000000000000002', undefined, ['card_declined']);
    errorOf(result, 'PAYMENT_DECLINED');
    expect(attempts).toEqual(['stripe:FAILURE:card_declined/generic_decline', 'adyen:AUTHORIZATION_FAILED:card_declined/2']);
  });

  it('is not sent on after a hard decline at Stripe (insufficient_funds): Adyen is never asked', async () => {
    const before = adyenPayments();
    const { result, attempts } = await pay(['stripe', 'adyen'], '4000000000009995', undefined, ['card_declined']);
    expect(errorOf(result, 'PAYMENT_DECLINED').extensions).toMatchObject({ declineCode: 'insufficient_funds', processorCode: 'insufficient_funds' });
    expect(attempts).toEqual(['stripe:AUTHORIZATION_FAILED:insufficient_funds/insufficient_funds']);
    expect(adyenPayments()).toBe(before);
  });

  it('is not sent on after Stripe refused the card number before any PaymentIntent (incorrect_number): a hard decline, Adyen never asked', async () => {
    const before = adyenPayments();
    const { result, payment, attempts } = await pay(['stripe', 'adyen'], INVALID_NUMBER_CARD, undefined, ['card_declined', 'unknown_decline']);
    expect(errorOf(result, 'PAYMENT_DECLINED').extensions).toMatchObject({ declineCode: 'invalid_number', processorCode: 'incorrect_number' });
    expect(payment).toMatchObject({ status: 'FAILED', errorCode: 'invalid_number', processorErrorCode: 'incorrect_number' });
    expect(attempts).toEqual(['stripe:AUTHORIZATION_FAILED:invalid_number/incorrect_number']);
    expect(adyenPayments()).toBe(before);
  });
});
