// The Adyen connector end to end: our GraphQL API (ADYEN_CHECKOUT_API_BASE at the fake), Adyen's test cards and
// holder names, its notifications signed with the official library. Every request the connector sends is
// validated by the fake against Adyen's Checkout API v71 document; one that does not validate fails the test.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  CancelPaymentDocument,
  CancelPaymentPostCaptureDocument,
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreateApiKeyDocument,
  CreateConnectorAccountDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  DisputesDocument,
  EventsDocument,
  PaymentDocument,
  RefundDocument,
  SyncPaymentDocument,
  type CreatePaymentInput,
} from '../gql/graphql.ts';
import { DEFENSE_PERIOD_ENDS_AT, REDIRECT_CARD, startAdyenFake, type AdyenFake, type NotificationItemInput } from '../fakes/adyen/server.ts';
import { maskCardNumbers } from '../../src/kernel/processor-error-body.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';

const HMAC_KEY = randomBytes(32).toString('hex').toUpperCase();
const TIMEOUT_MS = 4000;

let fake: AdyenFake;
let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
let accountId: string;
let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
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
  await sql?.end();
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
  return { id: created.id, clientSecret: created.clientSecret, result };
}

const paymentOf = async (id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment;

describe('Adyen connector accounts', () => {
  it('a live account is refused without its liveUrlPrefix (it could reach no live endpoint), and taken with it', async () => {
    const { key } = dataOf(
      await stack.api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: shop.merchantId } }),
    ).createApiKey;
    const live = stack.api.as(key);
    const credentials = { apiKey: `AQE${randomBytes(24).toString('hex')}`, merchantAccount: 'TestMerchant' };
    const refused = errorOf(await live(CreateConnectorAccountDocument, { input: { connectorName: 'adyen', credentials } }), 'INVALID_INPUT');
    expect(refused.extensions?.field).toBe('credentials.liveUrlPrefix');
    const created = dataOf(
      await live(CreateConnectorAccountDocument, {
        input: { connectorName: 'adyen', credentials: { ...credentials, liveUrlPrefix: '1797a841fbb37ca7-adyendemo' } },
      }),
    ).createConnectorAccount;
    expect(created).toMatchObject({ connectorName: 'adyen', mode: 'LIVE' });
  });
});

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

  it('a refusal is PAYMENT_DECLINED with our code and Adyen’s, each in its own field, and Adyen’s answer for the secret key only', async () => {
    const { id, clientSecret, result } = await confirm('4111111111111111', { holderName: 'NOT_ENOUGH_BALANCE' });
    const declined = errorOf(result, 'PAYMENT_DECLINED');
    expect(declined.extensions).toMatchObject({ declineCode: 'insufficient_funds', processorCode: '12' });
    expect(declined.extensions?.declineMessage).toBe('Not enough balance (Adyen refusalReasonCode 12)');
    const payment = await paymentOf(id);
    expect(payment).toMatchObject({ status: 'FAILED', errorCode: 'insufficient_funds', processorErrorCode: '12' });
    expect(payment.activeAttempt).toMatchObject({ errorCode: 'insufficient_funds', processorErrorCode: '12' });
    // Adyen's answer kept on the attempt, without the card's expiry its additional data carries; its
    // pspReference is masked when it has a card number's run of digits, as a real (16-digit) one may.
    expect(payment.activeAttempt.processorError).toEqual({
      pspReference: maskCardNumbers(payment.activeAttempt.connectorTransactionId!),
      merchantReference: payment.activeAttempt.id,
      resultCode: 'Refused',
      refusalReason: 'Not enough balance',
      refusalReasonCode: '12',
      additionalData: { refusalReasonRaw: 'Not enough balance', cardSummary: '1111' },
    });
    const browser = dataOf(await shop.publishable(PaymentDocument, { id, clientSecret })).payment;
    expect(browser.activeAttempt).toMatchObject({ processorErrorCode: '12', processorError: null });
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

  it('a return after a garbled one is a /payments/details call of its own (its Idempotency-Key comes from its redirectResult), not the first answer again', async () => {
    const { id, result } = await confirm(REDIRECT_CARD, { input: { returnUrl: 'https://shop.example/done' } });
    const back = new URL((await fetch(dataOf(result).confirmPayment.nextAction!.redirectToUrl, { redirect: 'manual' })).headers.get('location')!);
    const garbled = new URL(back);
    garbled.searchParams.set('redirectResult', Buffer.from('no such payment').toString('base64url'));
    await fetch(garbled, { redirect: 'manual' });
    expect((await paymentOf(id)).status).not.toBe('SUCCEEDED');
    const returned = await fetch(back, { redirect: 'manual' });
    expect(Object.fromEntries(new URL(returned.headers.get('location')!).searchParams)).toEqual({ payment_id: id, status: 'succeeded' });
    const keys = fake.requests.filter((request) => request.path === '/v71/payments/details').map((request) => request.idempotencyKey);
    expect(new Set(keys.slice(-2)).size).toBe(2);
  });

  it('an empty redirectResult field POSTed does not hide the one in the return URL’s query', async () => {
    const { id, result } = await confirm(REDIRECT_CARD, { input: { returnUrl: 'https://shop.example/done' } });
    const back = (await fetch(dataOf(result).confirmPayment.nextAction!.redirectToUrl, { redirect: 'manual' })).headers.get('location')!;
    const returned = await fetch(back, { method: 'POST', body: new URLSearchParams({ redirectResult: '' }), redirect: 'manual' });
    expect(returned.status).toBe(303);
    expect(fake.requests.at(-1)!).toMatchObject({
      path: '/v71/payments/details',
      body: { details: { redirectResult: new URL(back).searchParams.get('redirectResult') } },
    });
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('3DS returned by POST: the redirectResult of the form goes to /payments/details, and the browser is sent on with a GET', async () => {
    const { id, result } = await confirm(REDIRECT_CARD, { input: { returnUrl: 'https://shop.example/done' } });
    fake.returnWith('POST');
    let page: string;
    try {
      page = await (await fetch(dataOf(result).confirmPayment.nextAction!.redirectToUrl)).text();
    } finally {
      fake.returnWith('GET');
    }
    // What the browser submits: the form's action (our return URL, with its token) and its fields.
    const action = /<form method="post" action="([^"]+)">/.exec(page)![1]!.replace(/&amp;/g, '&');
    const redirectResult = /name="redirectResult" value="([^"]+)"/.exec(page)![1]!;
    expect(new URL(action).searchParams.has('redirectResult')).toBe(false);
    const returned = await fetch(action, { method: 'POST', body: new URLSearchParams({ redirectResult }), redirect: 'manual' });
    expect(returned.status).toBe(303);
    expect(Object.fromEntries(new URL(returned.headers.get('location')!).searchParams)).toEqual({ payment_id: id, status: 'succeeded' });
    expect(fake.requests.at(-1)!).toMatchObject({ path: '/v71/payments/details', body: { details: { redirectResult } } });
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

describe('Adyen: news that undoes or refuses money movement', () => {
  it('CAPTURE_FAILED after the payment was captured: FAILED with nothing received, and a plain failure before it changes nothing', async () => {
    const { id } = await confirm('4111111111111111');
    const [authorisation] = fake.queued.splice(0);
    await fake.deliver([authorisation!]);
    const late = {
      success: true,
      pspReference: 'CAPTUREFAILED001',
      originalReference: authorisation!.pspReference,
      merchantReference: 'cap_late',
      amount: authorisation!.amount,
    };
    // A failed cancellation is no news about the capture: the charge stands.
    await fake.deliver([{ ...late, eventCode: 'CANCELLATION', success: false }]);
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
    const answers = await fake.deliver([{ ...late, eventCode: 'CAPTURE_FAILED', reason: 'Capture rejected by the scheme' }]);
    expect(answers).toEqual([{ status: 200, body: '[accepted]' }]);
    expect(await paymentOf(id)).toMatchObject({ status: 'FAILED', amountReceived: 0, activeAttempt: { status: 'CAPTURE_FAILED', amountCaptured: 0 } });
    const events = dataOf(await shop.secret(EventsDocument, { objectId: id })).events.edges.map((edge) => edge.node.eventType);
    expect(events).toContain('PAYMENT_FAILED');
  });

  it('CAPTURE_FAILED of a payment already refunded from: left for an operator, not half undone', async () => {
    const { id } = await confirm('4111111111111111');
    const [authorisation] = fake.queued.splice(0);
    await fake.deliver([authorisation!]);
    await shop.secret(CreateRefundDocument, { input: { paymentId: id, amount: 500 } });
    fake.queued.splice(0);
    const late = { eventCode: 'CAPTURE_FAILED', success: true, pspReference: 'CAPTUREFAILED003', originalReference: authorisation!.pspReference };
    expect(await fake.deliver([{ ...late, merchantReference: 'cap_late', amount: authorisation!.amount }])).toEqual([{ status: 200, body: '[accepted]' }]);
    expect(await paymentOf(id)).toMatchObject({ status: 'SUCCEEDED', amountReceived: 2500 });
  });

  it('a void after capture is refused before anything is sent: Adyen refunds a captured payment instead', async () => {
    const { id } = await confirm('4111111111111111');
    await fake.deliver();
    const sent = fake.requests.length;
    const refused = errorOf(await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: id } }), 'INVALID_STATE');
    expect(refused).toMatchObject({ message: 'adyen cannot void a captured payment (SUCCEEDED); refund it instead.', extensions: { status: 'SUCCEEDED' } });
    expect(fake.requests.length).toBe(sent);
    expect(await paymentOf(id)).toMatchObject({ status: 'SUCCEEDED', version: expect.any(Number) });
  });
});

/** Adyen's identity of the event an item reports (the callback log's processor_event_id). */
const eventIdOf = (item: NotificationItemInput) => `${item.pspReference}:${item.eventCode}:${item.success}`;

/** The callback log's outcomes of `items`' events, oldest first, by event. */
async function loggedOutcomes(items: NotificationItemInput[]): Promise<Record<string, string[]>> {
  const ids = items.map(eventIdOf);
  const { rows } = await sql.query<{ processor_event_id: string; outcome: string }>(
    'SELECT processor_event_id, outcome FROM connector_callbacks WHERE connector_account_id = $1 AND processor_event_id = ANY($2) ORDER BY received_at, id',
    [accountId, ids],
  );
  return Object.fromEntries(ids.map((id) => [id, rows.filter((row) => row.processor_event_id === id).map((row) => row.outcome)]));
}

const eventCount = async (objectIds: string[]) =>
  (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE object_id = ANY($1)', [objectIds])).rows[0]!.n;

describe('Adyen notification batches', () => {
  it('every item of a batch is applied, answered [accepted] once, one log row each; the batch sent again changes nothing', async () => {
    const manual = await confirm('5555555555554444', { input: { captureMethod: 'MANUAL' } });
    const automatic = await confirm('4111111111111111');
    await shop.secret(CapturePaymentDocument, { input: { paymentId: manual.id } });
    const refund = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: automatic.id, amount: 700 } })).createRefund;
    const batch = fake.queued.splice(0);
    expect(batch.map((item) => item.eventCode)).toEqual(['AUTHORISATION', 'AUTHORISATION', 'CAPTURE', 'REFUND']);

    expect(await fake.deliverBatch(batch)).toEqual({ status: 200, body: '[accepted]' });
    expect((await paymentOf(manual.id)).status).toBe('SUCCEEDED');
    expect(dataOf(await shop.secret(RefundDocument, { id: refund.id })).refund.status).toBe('SUCCEEDED');
    const [authorisedManual, authorisedAutomatic, capture, refunded] = batch.map(eventIdOf);
    // The authorisations only repeat what Adyen's answers said already.
    const firstTime = {
      [authorisedManual!]: ['duplicate_or_stale'],
      [authorisedAutomatic!]: ['duplicate_or_stale'],
      [capture!]: ['applied'],
      [refunded!]: ['applied'],
    };
    expect(await loggedOutcomes(batch)).toEqual(firstTime);
    // Each row keeps its own item, signed by Adyen on its own, not the whole batch once per item.
    const { rows: kept } = await sql.query<{ processor_event_id: string; body: Buffer }>(
      'SELECT processor_event_id, body FROM connector_callbacks WHERE connector_account_id = $1 AND processor_event_id = ANY($2)',
      [accountId, batch.map(eventIdOf)],
    );
    expect(kept).toHaveLength(batch.length);
    for (const row of kept) {
      const { NotificationRequestItem: keptItem } = JSON.parse(row.body.toString('utf8')) as { NotificationRequestItem: NotificationItemInput };
      expect(eventIdOf(keptItem)).toBe(row.processor_event_id);
      expect(keptItem.additionalData).toHaveProperty('hmacSignature');
    }

    const events = await eventCount([manual.id, automatic.id, refund.id]);
    expect(await fake.deliverBatch(batch)).toEqual({ status: 200, body: '[accepted]' });
    expect(await eventCount([manual.id, automatic.id, refund.id])).toBe(events);
    expect(await loggedOutcomes(batch)).toEqual({
      [authorisedManual!]: ['duplicate_or_stale', 'duplicate_or_stale'],
      [authorisedAutomatic!]: ['duplicate_or_stale', 'duplicate_or_stale'],
      [capture!]: ['applied', 'duplicate_or_stale'],
      [refunded!]: ['applied', 'duplicate_or_stale'],
    });
  });

  it('a batch with one item signed with another key is refused whole: none of it is applied', async () => {
    const first = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    const second = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    await fake.deliver();
    await shop.secret(CapturePaymentDocument, { input: { paymentId: first.id } });
    await shop.secret(CapturePaymentDocument, { input: { paymentId: second.id } });
    const [capture, forged] = fake.queued.splice(0);
    const otherKey = `${HMAC_KEY.startsWith('F') ? 'E' : 'F'}${HMAC_KEY.slice(1)}`;
    expect((await fake.deliverBatch([capture!, { ...forged!, hmacKey: otherKey }])).status).toBe(401);
    expect((await paymentOf(first.id)).status).not.toBe('SUCCEEDED');
    expect((await paymentOf(second.id)).status).not.toBe('SUCCEEDED');
    expect(await loggedOutcomes([capture!, forged!])).toEqual({ [eventIdOf(capture!)]: [], [eventIdOf(forged!)]: [] });
    // Adyen sends it again, all signed: both are applied.
    expect(await fake.deliverBatch([capture!, forged!])).toEqual({ status: 200, body: '[accepted]' });
    expect((await paymentOf(first.id)).status).toBe('SUCCEEDED');
    expect((await paymentOf(second.id)).status).toBe('SUCCEEDED');
  });

  it('an item for another merchant account is acknowledged and logged as ignored, never applied; the others are', async () => {
    const ours = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    const theirs = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    await fake.deliver();
    await shop.secret(CapturePaymentDocument, { input: { paymentId: ours.id } });
    await shop.secret(CapturePaymentDocument, { input: { paymentId: theirs.id } });
    const [capture, elsewhere] = fake.queued.splice(0);
    const otherAccount = { ...elsewhere!, merchantAccountCode: 'AnotherMerchantAccount' };
    expect(await fake.deliverBatch([capture!, otherAccount])).toEqual({ status: 200, body: '[accepted]' });
    expect((await paymentOf(ours.id)).status).toBe('SUCCEEDED');
    expect((await paymentOf(theirs.id)).status).not.toBe('SUCCEEDED');
    expect(await loggedOutcomes([capture!, otherAccount])).toEqual({
      [eventIdOf(capture!)]: ['applied'],
      [eventIdOf(otherAccount)]: ['other_merchant_account'],
    });
  });

  it('a notification from Adyen’s live environment for this test account is acknowledged and logged as ignored, never applied', async () => {
    const { id } = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    await fake.deliver();
    await shop.secret(CapturePaymentDocument, { input: { paymentId: id } });
    const [capture] = fake.queued.splice(0);
    expect(await fake.deliverBatch([capture!], 'true')).toEqual({ status: 200, body: '[accepted]' });
    expect((await paymentOf(id)).status).not.toBe('SUCCEEDED');
    expect(await loggedOutcomes([capture!])).toEqual({ [eventIdOf(capture!)]: ['mode_mismatch'] });
    // From the test environment, as the account is: applied.
    expect(await fake.deliverBatch([capture!], 'false')).toEqual({ status: 200, body: '[accepted]' });
    expect((await paymentOf(id)).status).toBe('SUCCEEDED');
  });

  it('an item that fails unexpectedly makes Adyen send the batch again (500); sent again, what was applied changes nothing and the rest is applied', async () => {
    const captured = await confirm('4111111111111111', { input: { captureMethod: 'MANUAL' } });
    const refunded = await confirm('4111111111111111');
    await fake.deliver();
    await shop.secret(CapturePaymentDocument, { input: { paymentId: captured.id } });
    const refund = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: refunded.id, amount: 500 } })).createRefund;
    const batch = fake.queued.splice(0);
    // A fault in the refund's write, for this refund only (the run's database is shared).
    const fault = `refuse_${refund.id}`;
    await sql.query(
      `CREATE FUNCTION ${fault}() RETURNS trigger AS $$ BEGIN IF NEW.id = '${refund.id}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await sql.query(`CREATE TRIGGER ${fault} BEFORE UPDATE ON refunds FOR EACH ROW EXECUTE FUNCTION ${fault}()`);
    try {
      expect((await fake.deliverBatch(batch)).status).toBe(500);
      expect((await paymentOf(captured.id)).status).toBe('SUCCEEDED');
      expect(dataOf(await shop.secret(RefundDocument, { id: refund.id })).refund.status).toBe('PENDING');
    } finally {
      await sql.query(`DROP TRIGGER IF EXISTS ${fault} ON refunds`);
      await sql.query(`DROP FUNCTION IF EXISTS ${fault}()`);
    }
    const events = await eventCount([captured.id]);
    expect(await fake.deliverBatch(batch)).toEqual({ status: 200, body: '[accepted]' });
    expect(dataOf(await shop.secret(RefundDocument, { id: refund.id })).refund.status).toBe('SUCCEEDED');
    expect(await eventCount([captured.id])).toBe(events);
    const [capture, refundItem] = batch.map(eventIdOf);
    expect(await loggedOutcomes(batch)).toEqual({ [capture!]: ['applied', 'duplicate_or_stale'], [refundItem!]: ['applied'] });
  });
});

describe('Adyen disputes', () => {
  /** A payment Adyen authorised and captured, with its pspReference. */
  async function paidPayment() {
    const { id } = await confirm('4111111111111111');
    const [authorisation] = fake.queued;
    await fake.deliver();
    return { id, pspReference: authorisation!.pspReference };
  }
  const disputesOf = async (paymentId: string) => dataOf(await shop.secret(DisputesDocument, { paymentId })).disputes;
  const accepted = [{ status: 200, body: '[accepted]' }];

  it('NOTIFICATION_OF_CHARGEBACK opens the payment’s dispute, CHARGEBACK leaves it open, CHARGEBACK_REVERSED wins it', async () => {
    const payment = await paidPayment();
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'NOTIFICATION_OF_CHARGEBACK', 'Undefended')])).toEqual(accepted);
    const [opened] = await disputesOf(payment.id);
    expect(opened).toMatchObject({
      status: 'OPENED',
      amount: 2500,
      currency: 'EUR',
      reason: '10.4',
      connector: 'adyen',
      evidenceDueBy: new Date(DEFENSE_PERIOD_ENDS_AT).toISOString(),
    });
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'CHARGEBACK', 'Undefended')])).toEqual(accepted);
    expect((await disputesOf(payment.id)).map((dispute) => [dispute.id, dispute.status])).toEqual([[opened!.id, 'OPENED']]);
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'CHARGEBACK_REVERSED', 'Won')])).toEqual(accepted);
    expect((await disputesOf(payment.id)).map((dispute) => [dispute.id, dispute.status])).toEqual([[opened!.id, 'WON']]);
  });

  it('SECOND_CHARGEBACK loses it: its first steps in one batch, a reversal still pending changing nothing', async () => {
    const payment = await paidPayment();
    const first = ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK'].map((eventCode) => fake.disputeNotification(payment.pspReference, eventCode, 'Undefended'));
    expect(await fake.deliverBatch(first)).toEqual(accepted[0]);
    expect((await disputesOf(payment.id)).map((dispute) => dispute.status)).toEqual(['OPENED']);
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'CHARGEBACK_REVERSED', 'Pending')])).toEqual(accepted);
    expect((await disputesOf(payment.id)).map((dispute) => dispute.status)).toEqual(['OPENED']);
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'SECOND_CHARGEBACK', 'Lost')])).toEqual(accepted);
    expect((await disputesOf(payment.id)).map((dispute) => dispute.status)).toEqual(['LOST']);
  });

  it('without a disputeStatus (payments processed in Brazil) the eventCode decides: SECOND_CHARGEBACK is lost', async () => {
    const payment = await paidPayment();
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'NOTIFICATION_OF_CHARGEBACK')])).toEqual(accepted);
    expect((await disputesOf(payment.id)).map((dispute) => dispute.status)).toEqual(['OPENED']);
    expect(await fake.deliver([fake.disputeNotification(payment.pspReference, 'SECOND_CHARGEBACK')])).toEqual(accepted);
    expect((await disputesOf(payment.id)).map((dispute) => dispute.status)).toEqual(['LOST']);
  });
});
