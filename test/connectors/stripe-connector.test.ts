// How the Stripe connector reads what Stripe's API does, against the fake: references found again after a lost
// answer, refusals that prove nothing was done, and failures whose outcome is unknown (never failed by guess).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, type AuthorizeRequest } from '../../src/modules/connectors/port.ts';
import { StripeConnector } from '../../src/modules/connectors/stripe/connector.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { closedPort } from '../support/stack.ts';

let fake: FakeStripe;
let silent: Server;
let silentUrl: string;
beforeAll(async () => {
  fake = await startFakeStripe();
  // A Stripe that never answers.
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await fake?.close();
  silent?.closeAllConnections();
  await new Promise((resolve) => silent?.close(resolve));
});

const connector = (apiBase = fake.url, apiKey = 'sk_test_connectortests0001', timeoutMs = 2000) => new StripeConnector({ apiKey }, { apiBase, timeoutMs });
let counter = 0;
const request = (number = '4242424242424242'): AuthorizeRequest => ({
  reference: `att_connector_test_${++counter}`,
  amount: 2000,
  currency: 'USD',
  captureMethod: 'MANUAL',
  threeDs: false,
  paymentMethod: { type: 'card', card: { number, expiryMonth: 12, expiryYear: 2040, cvc: '123' } },
  saveCard: false,
  allowPartialAuthorization: false,
  returnUrl: 'https://api.example/payments/pay_1/redirect/response/stripe?token=t',
});
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a ConnectorError'),
    (error: unknown) => error as ConnectorError,
  );

/** An iDEAL payment as Stripe takes it: EUR, captured at once. */
const ideal = (bank = 'ing'): AuthorizeRequest => ({
  ...request(),
  currency: 'EUR',
  captureMethod: 'AUTOMATIC',
  paymentMethod: { type: 'bank_redirect', bank },
});

describe('the Stripe connector', () => {
  it('refuses, before any call, a currency whose minor unit Stripe counts otherwise than ISO 4217 (ISK, CLP, MGA, …)', async () => {
    const before = fake.requests.length;
    for (const currency of ['ISK', 'CLP', 'MGA', 'KWD']) {
      expect(await failure(connector().authorize({ ...request(), currency }))).toMatchObject({ kind: 'rejected', processorCode: 'currency_not_supported' });
    }
    expect(fake.requests.length).toBe(before);
  });

  it('finds a payment and a refund by our reference; finding none is an unknown outcome, never "none" (Stripe\'s search lags)', async () => {
    const stripe = connector();
    const sent = request();
    const authorized = await stripe.authorize(sent);
    expect(await stripe.findByReference(sent.reference)).toEqual(authorized);
    expect(await failure(stripe.findByReference('att_never_sent'))).toMatchObject({ outcomeUnknown: true, processorCode: 'not_found_yet' });
    await stripe.capture(authorized.transactionId, 2000, `${sent.reference}_capture`, { currency: 'USD', charged: 2000, reference: sent.reference });
    const refund = await stripe.refund({ transactionId: authorized.transactionId, amount: 700, currency: 'USD', reason: null, reference: 'ref_connector_1' });
    expect(await stripe.findRefundByReference('ref_connector_1', authorized.transactionId)).toEqual(refund);
    // Only that payment's refunds are listed (Stripe's refunds list by payment_intent), every page of them.
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/refunds', params: { payment_intent: authorized.transactionId } });
    expect(await stripe.syncRefund(refund.refundId)).toEqual(refund);
    expect(await failure(stripe.findRefundByReference('ref_never_sent', authorized.transactionId))).toMatchObject({
      outcomeUnknown: true,
      processorCode: 'not_found_yet',
    });
    // Another payment's refund is not this payment's, whatever its reference.
    expect(await failure(stripe.findRefundByReference('ref_connector_1', (await stripe.authorize(request())).transactionId))).toMatchObject({
      processorCode: 'not_found_yet',
    });
  });

  it('iDEAL: payment_method_data[type]=ideal with the bank, no card options; Stripe asks for the redirect', async () => {
    const sent = ideal('rabobank');
    const answer = await connector().authorize(sent);
    expect(answer).toMatchObject({ status: 'requires_authentication', nextAction: { type: 'redirect', url: `${fake.url}/ideal/${answer.transactionId}` } });
    const params = fake.requests.find((request) => request.idempotencyKey === sent.reference)!.params;
    expect(params).toMatchObject({ currency: 'eur', payment_method_data: { type: 'ideal', ideal: { bank: 'rabobank' } }, return_url: sent.returnUrl });
    expect(params).not.toHaveProperty('payment_method_options');
  });

  it('iDEAL: another currency than EUR, or a bank Stripe does not name, is refused before any call', async () => {
    const before = fake.requests.length;
    expect(await failure(connector().authorize({ ...ideal(), currency: 'USD' }))).toMatchObject({
      kind: 'rejected',
      processorCode: 'currency_not_supported',
      message: 'stripe: iDEAL takes payments in EUR only, not USD',
    });
    expect(await failure(connector().authorize(ideal('sandbox_bank')))).toMatchObject({ kind: 'rejected', processorCode: 'bank_not_supported' });
    expect(fake.requests.length).toBe(before);
  });

  it('the same attempt sent twice is one PaymentIntent (Idempotency-Key)', async () => {
    const sent = request();
    const [first, second] = [await connector().authorize(sent), await connector().authorize(sent)];
    expect(second.transactionId).toBe(first.transactionId);
  });

  it('refusals that prove nothing was done: a wrong state, an unknown intent, a revoked key', async () => {
    const authorized = await connector().authorize(request());
    await connector().void(authorized.transactionId, 'void_1');
    expect(
      await failure(connector().capture(authorized.transactionId, 2000, 'capture_1', { currency: 'USD', charged: 2000, reference: 'attempt_1' })),
    ).toMatchObject({
      kind: 'rejected',
      outcomeUnknown: false,
      processorCode: 'payment_intent_unexpected_state',
    });
    expect(await failure(connector().sync('pi_missing'))).toMatchObject({ kind: 'rejected', outcomeUnknown: false, processorCode: 'resource_missing' });
    expect(await failure(connector(fake.url, 'sk_live_notacceptedhere01').sync('pi_missing'))).toMatchObject({ kind: 'unauthorized', outcomeUnknown: false });
  });

  it('a refused connection did nothing; a timeout leaves the outcome unknown', async () => {
    expect(await failure(connector(`http://127.0.0.1:${await closedPort()}`).authorize(request()))).toMatchObject({
      kind: 'unreachable',
      outcomeUnknown: false,
    });
    expect(await failure(connector(silentUrl, undefined, 300).authorize(request()))).toMatchObject({ kind: 'timeout', outcomeUnknown: true });
  });

  it('what it does not support is refused, not retried', async () => {
    const stripe = connector();
    for (const call of [
      stripe.createPayout(),
      stripe.createSession(),
      stripe.authorize({ ...request(), paymentMethod: { type: 'bank_debit', accountHolderName: 'A B', iban: 'NL91ABNA0417164300' } }),
      stripe.authorize({ ...ideal(), captureMethod: 'MANUAL' }),
      // Stripe would save an iDEAL payment's method as a SEPA debit, which is no card.
      stripe.authorize({ ...ideal(), saveCard: true }),
    ]) {
      const error = await failure(call);
      expect(error).toBeInstanceOf(ConnectorError);
      expect(error).toMatchObject({ kind: 'rejected', outcomeUnknown: false, processorCode: 'unsupported_by_connector' });
    }
  });

  it('a lost answer to the Customer made before a saved card’s PaymentIntent is a known outcome: no intent was asked for', async () => {
    // The library sends a request once more when its connection closes (with the same Idempotency-Key): both answers lost.
    fake.loseAnswers('/v1/customers', 2);
    const sent = request();
    expect(await failure(connector().authorize({ ...sent, saveCard: true }))).toMatchObject({ outcomeUnknown: false });
    expect(fake.requests.filter((call) => call.idempotencyKey === sent.reference)).toEqual([]);
  });

  it('a saved card token it did not make (not `cus_…:pm_…`) is refused before any call', async () => {
    const sent = fake.requests.length;
    const error = await failure(connector().authorize({ ...request(), paymentMethod: { type: 'saved_card', token: 'pm_without_customer', cvc: null } }));
    expect(error).toMatchObject({ kind: 'rejected', outcomeUnknown: false, processorCode: 'invalid_token' });
    expect(fake.requests.length).toBe(sent);
  });
});
