// The Stripe connector through our GraphQL API, against the local fake of Stripe's API (test/fakes/stripe): a
// merchant adds a Stripe test account and takes card payments (3DS included), captures, voids and refunds with
// the same operations as on the sandbox, and Stripe's webhooks move its payments.
import Stripe from 'stripe';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  CancelPaymentDocument,
  CancelPaymentPostCaptureDocument,
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreateConnectorAccountDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  DisputesDocument,
  PaymentDocument,
  SyncRefundDocument,
  type CaptureMethod,
  type PaymentMethodDataInput,
} from '../gql/graphql.ts';
import fixtures from '../fakes/stripe/fixtures.json' with { type: 'json' };
import type { FakeStripe } from '../fakes/stripe/server.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import type { Stack } from '../support/stack.ts';
import { startStripeShop, stripeKey, type StripeShop } from '../support/stripe-shop.ts';

let fake: FakeStripe;
let stack: Stack;
let sql: pg.Client;
let shop: StripeShop;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ fake, stack, shop, close } = await startStripeShop());
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await close?.();
});

const CARDS = {
  success: '4242424242424242',
  threeDs: '4000002500003155',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  expired: '4000000000000069',
  incorrectCvc: '4000000000000127',
};

type PayOptions = { captureMethod?: CaptureMethod; returnUrl?: string; currency?: string };

async function payWith(paymentMethodData: PaymentMethodDataInput, options: PayOptions = {}) {
  const created = dataOf(
    await shop.secret(CreatePaymentDocument, {
      input: {
        amount: 1500,
        currency: options.currency ?? 'EUR',
        captureMethod: options.captureMethod ?? 'AUTOMATIC',
        ...(options.returnUrl ? { returnUrl: options.returnUrl } : {}),
      },
    }),
  ).createPayment;
  return { created, confirmed: await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData } }) };
}

const pay = (number: string, options: PayOptions = {}) =>
  payWith({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } }, options);

const paymentOf = async (id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment;

describe('Stripe connector accounts', () => {
  it('takes a Stripe test key; refuses a live key on a test account and a key that is not Stripe’s', async () => {
    for (const apiKey of [stripeKey('live'), 'pk_test_1234567890abc', 'sk_sandbox_1234567890']) {
      const refused = errorOf(
        await shop.secret(CreateConnectorAccountDocument, { input: { connectorName: 'stripe', credentials: { apiKey } } }),
        'INVALID_INPUT',
      );
      expect(refused.message).toMatch(/credentials\.apiKey/);
    }
  });
});

describe('card payments at Stripe', () => {
  it('4242: SUCCEEDED, our attempt id as the Idempotency-Key and metadata reference of the PaymentIntent', async () => {
    const { created, confirmed } = await pay(CARDS.success);
    expect(dataOf(confirmed).confirmPayment.status).toBe('SUCCEEDED');
    const payment = await paymentOf(created.id);
    expect(payment).toMatchObject({ status: 'SUCCEEDED', amountReceived: 1500, connector: 'stripe' });
    const sent = fake.requests.find((request) => request.path === '/v1/payment_intents' && request.idempotencyKey === payment.activeAttempt.id);
    expect(sent?.params).toMatchObject({
      amount: '1500',
      currency: 'eur',
      confirm: 'true',
      capture_method: 'automatic',
      metadata: { reference: payment.activeAttempt.id },
    });
    expect(payment.activeAttempt.connectorTransactionId).toMatch(/^pi_/);
  });

  it.each([
    [CARDS.declined, 'card_declined', 'generic_decline', 'card_declined/generic_decline'],
    [CARDS.insufficientFunds, 'insufficient_funds', 'insufficient_funds', 'card_declined/insufficient_funds'],
    [CARDS.expired, 'expired_card', 'expired_card', 'expired_card/expired_card'],
    [CARDS.incorrectCvc, 'incorrect_cvc', 'incorrect_cvc', 'incorrect_cvc/incorrect_cvc'],
  ])('%s: PAYMENT_DECLINED with our code %s and Stripe’s decline_code %s; the payment is FAILED', async (number, code, declineCode, stripeCodes) => {
    const { created, confirmed } = await pay(number);
    const error = errorOf(confirmed, 'PAYMENT_DECLINED');
    expect(error.extensions).toMatchObject({ declineCode: code, processorCode: declineCode, paymentId: created.id, status: 'FAILED' });
    const payment = await paymentOf(created.id);
    expect(payment).toMatchObject({ status: 'FAILED', errorCode: code, processorErrorCode: declineCode });
    expect(payment.activeAttempt).toMatchObject({ errorCode: code, processorErrorCode: declineCode });
    expect(payment.errorMessage).toContain(`(stripe: ${stripeCodes})`);
  });

  it('a decline keeps Stripe’s error object on the attempt, for the secret key only, never the card number its message quotes', async () => {
    fake.quoteCardInDeclines((number) => `Your card ${number} has insufficient funds.`);
    let declined;
    try {
      declined = await pay(CARDS.insufficientFunds);
    } finally {
      fake.quoteCardInDeclines(null);
    }
    const error = errorOf(declined.confirmed, 'PAYMENT_DECLINED');
    const payment = await paymentOf(declined.created.id);
    expect(payment.activeAttempt.processorError).toEqual({
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card [number masked] has insufficient funds.',
      doc_url: 'https://stripe.com/docs/error-codes/card_declined',
    });
    expect(payment.attempts.at(-1)?.processorError).toEqual(payment.activeAttempt.processorError);
    // Nowhere: not in the error answered, the payment's message nor its attempts.
    expect(JSON.stringify([error, payment])).not.toContain(CARDS.insufficientFunds);
    const browser = dataOf(await shop.publishable(PaymentDocument, { id: declined.created.id, clientSecret: declined.created.clientSecret })).payment;
    expect(browser.activeAttempt).toMatchObject({ processorErrorCode: 'insufficient_funds', processorError: null });
    expect(browser.attempts.map((attempt) => attempt.processorError)).toEqual([null]);
  });

  it('a capture Stripe refuses (HTTP 400) keeps its error object on the attempt, without the intent’s client_secret', async () => {
    const { created } = await pay(CARDS.success, { captureMethod: 'MANUAL' });
    const intent = fake.intents.get((await paymentOf(created.id)).activeAttempt.connectorTransactionId!)!;
    // Cancelled at Stripe meanwhile (in its dashboard): Stripe refuses the capture.
    intent.status = 'canceled';
    errorOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id } }), 'INVALID_STATE');
    const attempt = (await paymentOf(created.id)).activeAttempt;
    expect(attempt).toMatchObject({ status: 'CAPTURE_FAILED', processorErrorCode: 'payment_intent_unexpected_state' });
    expect(attempt.processorError).toMatchObject({
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      message: 'You cannot capture this PaymentIntent because it has a status of canceled.',
      doc_url: 'https://stripe.com/docs/error-codes/payment-intent-unexpected-state',
      payment_intent: { id: intent.id, status: 'canceled' },
    });
    expect(JSON.stringify(attempt.processorError)).not.toContain(String(intent.client_secret));
    expect(JSON.stringify(attempt.processorError)).not.toMatch(/statusCode|requestId|headers/);
  });

  it('manual capture, captured in part: PARTIALLY_CAPTURED, the amount sent as amount_to_capture', async () => {
    const { created, confirmed } = await pay(CARDS.success, { captureMethod: 'MANUAL' });
    expect(dataOf(confirmed).confirmPayment).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 1500 });
    const captured = dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id, amountToCapture: 900 } })).capturePayment;
    expect(captured).toMatchObject({ status: 'PARTIALLY_CAPTURED', amountReceived: 900 });
    expect(fake.requests.at(-1)).toMatchObject({ path: expect.stringMatching(/\/capture$/), params: { amount_to_capture: '900' } });
  });

  it('manual capture in full, and a void of another authorization', async () => {
    const full = await pay(CARDS.success, { captureMethod: 'MANUAL' });
    expect(dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: full.created.id } })).capturePayment.status).toBe('SUCCEEDED');
    const voided = await pay(CARDS.success, { captureMethod: 'MANUAL' });
    expect(dataOf(await shop.secret(CancelPaymentDocument, { input: { paymentId: voided.created.id } })).cancelPayment.status).toBe('CANCELLED');
    expect(fake.intents.get((await paymentOf(voided.created.id)).activeAttempt.connectorTransactionId!)?.status).toBe('canceled');
  });

  it('a void after capture is refused before anything is sent: Stripe cancels no succeeded intent, a refund gives the money back', async () => {
    const { created } = await pay(CARDS.success);
    const sent = fake.requests.length;
    const refused = errorOf(await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: created.id } }), 'INVALID_STATE');
    expect(refused).toMatchObject({ message: 'stripe cannot void a captured payment (SUCCEEDED); refund it instead.', extensions: { status: 'SUCCEEDED' } });
    expect(fake.requests.length).toBe(sent);
    expect((await paymentOf(created.id)).status).toBe('SUCCEEDED');
  });

  it('refunds in part then the rest, each under our refund id as Idempotency-Key; more is refused', async () => {
    const { created } = await pay(CARDS.success);
    const first = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: created.id, amount: 500 } })).createRefund;
    expect(first).toMatchObject({ status: 'SUCCEEDED', amount: 500 });
    expect(fake.requests.at(-1)).toMatchObject({ path: '/v1/refunds', idempotencyKey: first.id, params: { amount: '500', metadata: { reference: first.id } } });
    const rest = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: created.id } })).createRefund;
    expect(rest).toMatchObject({ status: 'SUCCEEDED', amount: 1000 });
    expect((await shop.secret(CreateRefundDocument, { input: { paymentId: created.id, amount: 1 } })).errors).toBeDefined();
  });

  it('a refund whose answer was lost stays PENDING; syncRefund finds it by our reference among its payment’s refunds: SUCCEEDED', async () => {
    const { created } = await pay(CARDS.success);
    const transactionId = (await paymentOf(created.id)).activeAttempt.connectorTransactionId!;
    // The library sends a request once more when its connection closes (with the same Idempotency-Key): both answers lost.
    fake.loseAnswers('/v1/refunds', 2);
    const pending = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: created.id, amount: 400 } })).createRefund;
    expect(pending).toMatchObject({ status: 'PENDING', amount: 400 });
    const synced = dataOf(await shop.secret(SyncRefundDocument, { input: { refundId: pending.id } })).syncRefund;
    expect(synced).toMatchObject({ id: pending.id, status: 'SUCCEEDED', amount: 400 });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/refunds', params: { payment_intent: transactionId } });
  });

  it('a refund whose answer was lost, of an attempt that never learnt its PaymentIntent id: no lookup (Stripe would list every refund of the account), it stays PENDING', async () => {
    const { created } = await pay(CARDS.success);
    fake.loseAnswers('/v1/refunds', 2);
    const pending = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: created.id, amount: 300 } })).createRefund;
    // What a payment whose authorization answer was lost and never found would look like.
    await sql.query('UPDATE payment_attempts SET connector_transaction_id = NULL WHERE id = $1', [(await paymentOf(created.id)).activeAttempt.id]);
    const sent = fake.requests.length;
    const synced = dataOf(await shop.secret(SyncRefundDocument, { input: { refundId: pending.id } })).syncRefund;
    expect(synced).toMatchObject({ id: pending.id, status: 'PENDING' });
    expect(fake.requests.slice(sent)).toEqual([]);
  });

  it('3DS: requires_action redirects to Stripe’s page; back at our redirect route, the intent is retrieved: SUCCEEDED', async () => {
    const { created, confirmed } = await pay(CARDS.threeDs, { returnUrl: 'https://shop.example/done' });
    const pending = dataOf(confirmed).confirmPayment;
    expect(pending.status).toBe('REQUIRES_CUSTOMER_ACTION');
    expect(pending.nextAction?.redirectToUrl).toMatch(new RegExp(`^${fake.url}/3ds/pi_`));
    const completed = await fetch(`${pending.nextAction!.redirectToUrl}/complete`, { method: 'POST', redirect: 'manual' });
    const back = new URL(completed.headers.get('location')!);
    expect(back.pathname).toBe(`/payments/${created.id}/redirect/response/stripe`);
    const returned = await fetch(back, { redirect: 'manual' });
    expect(returned.status).toBe(302);
    expect(Object.fromEntries(new URL(returned.headers.get('location')!).searchParams)).toEqual({ payment_id: created.id, status: 'succeeded' });
    expect((await paymentOf(created.id)).status).toBe('SUCCEEDED');
  });
});

describe('iDEAL at Stripe (our bank_redirect)', () => {
  /** The customer at Stripe's iDEAL test page presses `button` (`complete` or `fail`) and comes back through our redirect route. */
  async function atTheBank(redirectToUrl: string, button: 'complete' | 'fail') {
    const page = await fetch(redirectToUrl);
    expect(await page.text()).toContain('Authorize test payment');
    const pressed = await fetch(`${redirectToUrl}/${button}`, { method: 'POST', redirect: 'manual' });
    const back = new URL(pressed.headers.get('location')!);
    const returned = await fetch(back, { redirect: 'manual' });
    return { back, merchantReturn: Object.fromEntries(new URL(returned.headers.get('location')!).searchParams) };
  }

  it('confirmed with a bank: REQUIRES_CUSTOMER_ACTION, redirected to iDEAL; authorized there and back at our route: SUCCEEDED', async () => {
    const { created, confirmed } = await payWith({ bankRedirect: { bank: 'ing' } }, { returnUrl: 'https://shop.example/done' });
    const pending = dataOf(confirmed).confirmPayment;
    expect(pending.status).toBe('REQUIRES_CUSTOMER_ACTION');
    expect(pending.nextAction?.redirectToUrl).toMatch(new RegExp(`^${fake.url}/ideal/pi_`));
    const intent = fake.intents.get((await paymentOf(created.id)).activeAttempt.connectorTransactionId!)!;
    expect(intent).toMatchObject({ currency: 'eur', payment_method_types: ['ideal'] });

    const { back, merchantReturn } = await atTheBank(pending.nextAction!.redirectToUrl!, 'complete');
    expect(back.pathname).toBe(`/payments/${created.id}/redirect/response/stripe`);
    expect(merchantReturn).toEqual({ payment_id: created.id, status: 'succeeded' });
    expect(await paymentOf(created.id)).toMatchObject({ status: 'SUCCEEDED', amountReceived: 1500, connector: 'stripe' });
    // Back at our route, the intent was retrieved from Stripe.
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v1/payment_intents/${String(intent.id)}` });
  });

  it('failed at iDEAL: back at our route, the payment is FAILED (authentication_failed)', async () => {
    const { created, confirmed } = await payWith({ bankRedirect: { bank: 'rabobank' } }, { returnUrl: 'https://shop.example/done' });
    const { merchantReturn } = await atTheBank(dataOf(confirmed).confirmPayment.nextAction!.redirectToUrl!, 'fail');
    expect(merchantReturn).toEqual({ payment_id: created.id, status: 'failed' });
    expect(await paymentOf(created.id)).toMatchObject({ status: 'FAILED', errorCode: 'authentication_failed' });
  });

  it('in another currency than EUR: PAYMENT_DECLINED (currency_not_supported) saying so, nothing sent to Stripe', async () => {
    const before = fake.requests.length;
    const { created, confirmed } = await payWith({ bankRedirect: { bank: 'ing' } }, { currency: 'USD' });
    const error = errorOf(confirmed, 'PAYMENT_DECLINED');
    expect(error.message).toContain('iDEAL takes payments in EUR only, not USD');
    expect(error.extensions).toMatchObject({ declineCode: 'currency_not_supported', paymentId: created.id, status: 'FAILED' });
    expect(fake.requests.length).toBe(before);
  });
});

describe('Stripe webhooks', () => {
  it('registration creates a Stripe webhook endpoint at our callback route and keeps its secret; its events move a payment', async () => {
    const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
      method: 'POST',
      headers: { 'api-key': shop.secretKey },
    });
    expect(registered.status).toBe(200);
    const endpoint = fake.requests.find((request) => request.path === '/v1/webhook_endpoints');
    expect(endpoint?.params.url).toMatch(new RegExp(`^https?://[^/]+/webhooks/${shop.merchantId}/${shop.connectorAccountId}$`));
    expect(endpoint?.params.enabled_events).toContain('payment_intent.succeeded');
    // Its events are shaped by the API version the library is pinned to, whatever the account's default.
    expect(endpoint?.params.api_version).toBe(Stripe.API_VERSION);

    // The customer completes 3DS but never comes back: Stripe's payment_intent.succeeded moves the payment.
    const { created, confirmed } = await pay(CARDS.threeDs);
    await fetch(`${dataOf(confirmed).confirmPayment.nextAction!.redirectToUrl}/complete`, { method: 'POST', redirect: 'manual' });
    await expect.poll(async () => (await paymentOf(created.id)).status, { timeout: 5000 }).toBe('SUCCEEDED');

    // A tampered event is refused.
    const intent = fake.intents.get((await paymentOf(created.id)).activeAttempt.connectorTransactionId!)!;
    const forged = await fetch(`${stack.api.url}/webhooks/${shop.merchantId}/${shop.connectorAccountId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: JSON.stringify({ id: 'evt_forged', type: 'payment_intent.canceled', data: { object: { ...intent, status: 'canceled' } } }),
    });
    expect(forged.status).toBe(401);
    expect(await fake.sendEvent('payment_intent.succeeded', intent)).toEqual([200]);

    // Stripe's dispute of the payment opens ours.
    const dispute = { ...fixtures.dispute, id: 'dp_e2e_1', payment_intent: intent.id, amount: 1500, currency: 'eur', status: 'needs_response' };
    expect(await fake.sendEvent('charge.dispute.created', dispute)).toEqual([200]);
    const [opened] = dataOf(await shop.secret(DisputesDocument, { paymentId: created.id })).disputes;
    expect(opened).toMatchObject({ amount: 1500, currency: 'EUR', status: 'OPENED', connectorDisputeId: 'dp_e2e_1' });
  });
});
