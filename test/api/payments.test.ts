// The card flow end to end: GraphQL API → service → sandbox processor over HTTP → state machines. The last
// test checks that the scenarios above drove every row of the seed's two tables.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { ATTEMPT_TRANSITIONS } from '../../src/modules/payments/machine/attempt.ts';
import { INTENT_TRANSITIONS } from '../../src/modules/payments/machine/intent.ts';
import {
  CancelPaymentDocument,
  CancelPaymentPostCaptureDocument,
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  PaymentDocument,
  PaymentsDocument,
  SyncPaymentDocument,
  type CreatePaymentInput,
} from '../gql/graphql.ts';
import { startTestApi } from '../support/api.ts';
import { answer, startReceiver } from '../support/receiver.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { closedPort, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { completeChallenge } from '../support/three-ds.ts';

const CARDS = {
  visa: '4242424242424242',
  threeDs: '4000002500003155',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  expired: '4000000000000069',
  processingError: '4000000000000119',
};
const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123', holderName: 'Ada Lovelace' } });

let stack: Stack;
let merchant: Awaited<ReturnType<typeof merchantWithSandbox>>;
let sql: pg.Client;
const paymentIds: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  merchant = await merchantWithSandbox(stack);
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

async function create(input: Partial<CreatePaymentInput> = {}, headers: Record<string, string> = {}) {
  const payment = dataOf(
    await merchant.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'USD', returnUrl: 'https://shop.example/done', ...input } }, headers),
  ).createPayment;
  paymentIds.push(payment.id);
  return payment;
}

/** Confirms as the SDK does: publishable key + client secret. */
const confirm = (clientSecret: string, number: string) =>
  merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret, paymentMethodData: card(number) } });

async function get(id: string) {
  return dataOf(await merchant.secret(PaymentDocument, { id })).payment;
}

describe('cards without 3DS', () => {
  it('automatic capture: create, confirm with the SDK keys, succeeded', async () => {
    const created = await create();
    expect(created).toMatchObject({ status: 'REQUIRES_PAYMENT_METHOD', amount: 1000, currency: 'USD', captureMethod: 'AUTOMATIC' });
    expect(created.clientSecret).toMatch(new RegExp(`^${created.id}_secret_`));
    const confirmed = dataOf(await confirm(created.clientSecret, CARDS.visa)).confirmPayment;
    expect(confirmed).toMatchObject({ status: 'SUCCEEDED', amountReceived: 1000, connector: 'sandbox' });
    expect(confirmed.activeAttempt).toMatchObject({ status: 'CHARGED', amountCaptured: 1000, card: { brand: 'VISA', last4: '4242' } });
    const { history } = dataOf(await merchant.secret(PaymentDocument, { id: created.id })).payment;
    expect(history.filter((row) => row.subject === 'attempt').map((row) => `${row.fromStatus}>${row.toStatus}`)).toEqual([
      'null>PAYMENT_METHOD_AWAITED',
      'PAYMENT_METHOD_AWAITED>CONFIRMATION_AWAITED',
      'CONFIRMATION_AWAITED>PENDING',
      'PENDING>CHARGED',
    ]);
    expect(history.filter((row) => row.subject === 'intent').map((row) => row.toStatus)).toEqual([
      'REQUIRES_PAYMENT_METHOD',
      'REQUIRES_CONFIRMATION',
      'PROCESSING',
      'SUCCEEDED',
    ]);
    const atProcessor = await merchant.sandboxPayment(`/${confirmed.activeAttempt.connectorTransactionId}`);
    expect(atProcessor.body).toMatchObject({ status: 'succeeded', amount_captured: 1000, reference: confirmed.activeAttempt.id });
  });

  it('manual capture: created with a card, confirmed, then captured', async () => {
    const created = await create({ captureMethod: 'MANUAL', paymentMethodData: card(CARDS.visa) });
    expect(created.status).toBe('REQUIRES_CONFIRMATION');
    const authorized = dataOf(await confirm(created.clientSecret, CARDS.visa)).confirmPayment;
    expect(authorized).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 1000, amountReceived: 0 });
    const captured = dataOf(await merchant.secret(CapturePaymentDocument, { input: { paymentId: created.id } })).capturePayment;
    expect(captured).toMatchObject({ status: 'SUCCEEDED', amountReceived: 1000, amountCapturable: 0 });
    expect(captured.activeAttempt.status).toBe('CHARGED');
  });

  it('partial capture captures less and releases the rest', async () => {
    const created = await create({ captureMethod: 'MANUAL' });
    dataOf(await confirm(created.clientSecret, CARDS.visa));
    errorOf(await merchant.secret(CapturePaymentDocument, { input: { paymentId: created.id, amountToCapture: 1001 } }), 'INVALID_INPUT');
    errorOf(await merchant.secret(CapturePaymentDocument, { input: { paymentId: created.id, amountToCapture: 0 } }), 'INVALID_INPUT');
    const captured = dataOf(await merchant.secret(CapturePaymentDocument, { input: { paymentId: created.id, amountToCapture: 400 } })).capturePayment;
    expect(captured).toMatchObject({ status: 'PARTIALLY_CAPTURED', amountReceived: 400 });
    expect(captured.activeAttempt.status).toBe('PARTIAL_CHARGED');
  });

  it('confirm: true confirms in the create call', async () => {
    const payment = await create({ confirm: true, paymentMethodData: card(CARDS.visa) });
    expect(payment.status).toBe('SUCCEEDED');
  });
});

describe('declines', () => {
  it.each([
    ['card_declined', CARDS.declined],
    ['insufficient_funds', CARDS.insufficientFunds],
    ['expired_card', CARDS.expired],
    ['processing_error', CARDS.processingError],
  ])('%s: PAYMENT_DECLINED with the processor’s code (the sandbox sends the catalog’s); the payment is FAILED', async (code, number) => {
    const created = await create();
    const error = errorOf(await confirm(created.clientSecret, number), 'PAYMENT_DECLINED');
    expect(error.extensions).toMatchObject({ declineCode: code, processorCode: code, paymentId: created.id, status: 'FAILED' });
    const payment = await get(created.id);
    expect(payment).toMatchObject({ status: 'FAILED', errorCode: code, processorErrorCode: code });
    expect(payment.activeAttempt.status).toBe('AUTHORIZATION_FAILED');
    // The sandbox's error object, as it sent it.
    expect(payment.activeAttempt.processorError).toEqual({ code, message: payment.errorMessage, retryable: expect.any(Boolean) });
  });
});

describe('cards with 3DS', () => {
  it('success: the customer completes the challenge and returns to the merchant with the status', async () => {
    const created = await create();
    const pending = dataOf(await confirm(created.clientSecret, CARDS.threeDs)).confirmPayment;
    expect(pending.status).toBe('REQUIRES_CUSTOMER_ACTION');
    expect(pending.activeAttempt.status).toBe('DEVICE_DATA_COLLECTION_PENDING');
    expect(pending.nextAction?.type).toBe('REDIRECT_TO_URL');
    const landing = await completeChallenge(pending.nextAction!.redirectToUrl, 'complete');
    expect(`${landing.origin}${landing.pathname}`).toBe('https://shop.example/done');
    expect(Object.fromEntries(landing.searchParams)).toEqual({ payment_id: created.id, status: 'succeeded' });
    const payment = await get(created.id);
    expect(payment.status).toBe('SUCCEEDED');
    const { history } = dataOf(await merchant.secret(PaymentDocument, { id: created.id })).payment;
    expect(
      history
        .filter((row) => row.subject === 'attempt')
        .map((row) => row.toStatus)
        .slice(-4),
    ).toEqual(['DEVICE_DATA_COLLECTION_PENDING', 'AUTHENTICATION_PENDING', 'AUTHENTICATION_SUCCESSFUL', 'CHARGED']);
  });

  it('requested by the merchant (THREE_DS) with manual capture ends awaiting capture', async () => {
    const created = await create({ authenticationType: 'THREE_DS', captureMethod: 'MANUAL' });
    const pending = dataOf(await confirm(created.clientSecret, CARDS.visa)).confirmPayment;
    expect(pending.status).toBe('REQUIRES_CUSTOMER_ACTION');
    const landing = await completeChallenge(pending.nextAction!.redirectToUrl, 'complete');
    expect(landing.searchParams.get('status')).toBe('requires_capture');
    expect((await get(created.id)).activeAttempt.status).toBe('AUTHORIZED');
  });

  it('failure: the payment fails and the customer returns with status failed', async () => {
    const created = await create();
    const pending = dataOf(await confirm(created.clientSecret, CARDS.threeDs)).confirmPayment;
    const landing = await completeChallenge(pending.nextAction!.redirectToUrl, 'fail');
    expect(landing.searchParams.get('status')).toBe('failed');
    const payment = await get(created.id);
    expect(payment.status).toBe('FAILED');
    expect(payment.activeAttempt.status).toBe('AUTHENTICATION_FAILED');
  });
});

describe('cancel and void', () => {
  it('cancels before confirmation, from REQUIRES_PAYMENT_METHOD and from REQUIRES_CONFIRMATION', async () => {
    for (const input of [{}, { paymentMethodData: card(CARDS.visa) }]) {
      const created = await create(input);
      const cancelled = dataOf(
        await merchant.secret(CancelPaymentDocument, { input: { paymentId: created.id, cancellationReason: 'customer left' } }),
      ).cancelPayment;
      expect(cancelled).toMatchObject({ status: 'CANCELLED', cancellationReason: 'customer left' });
      expect(cancelled.activeAttempt.status).toBe('VOIDED');
    }
  });

  it('cancels during device data collection and during authentication here only: no void reaches the processor (the seed)', async () => {
    for (const visitChallenge of [false, true]) {
      const created = await create();
      const pending = dataOf(await confirm(created.clientSecret, CARDS.threeDs)).confirmPayment;
      if (visitChallenge) {
        await fetch(pending.nextAction!.redirectToUrl); // device data collected at the processor
        expect(dataOf(await merchant.secret(SyncPaymentDocument, { input: { paymentId: created.id } })).syncPayment.activeAttempt.status).toBe(
          'AUTHENTICATION_PENDING',
        );
      }
      const before = await merchant.sandboxPayment(`/${pending.activeAttempt.connectorTransactionId}`);
      const cancelled = dataOf(await merchant.secret(CancelPaymentDocument, { input: { paymentId: created.id } })).cancelPayment;
      expect(cancelled.status).toBe('CANCELLED');
      expect(cancelled.activeAttempt.status).toBe('VOIDED');
      // The processor's own record is as it was: not canceled, not even touched.
      const after = await merchant.sandboxPayment(`/${pending.activeAttempt.connectorTransactionId}`);
      expect(after.body.status).not.toBe('canceled');
      expect(after.body).toEqual(before.body);
    }
  });

  it('a cancel during 3DS after the customer completed the challenge voids the authorization at the processor', async () => {
    const created = await create({ captureMethod: 'MANUAL' });
    const pending = dataOf(await confirm(created.clientSecret, CARDS.threeDs)).confirmPayment;
    // The customer completes the challenge but their browser never comes back to us.
    await fetch(pending.nextAction!.redirectToUrl);
    expect((await fetch(`${pending.nextAction!.redirectToUrl}/complete`, { method: 'POST', redirect: 'manual' })).status).toBe(303);
    const cancelled = dataOf(await merchant.secret(CancelPaymentDocument, { input: { paymentId: created.id } })).cancelPayment;
    expect(cancelled.status).toBe('CANCELLED');
    expect((await merchant.sandboxPayment(`/${pending.activeAttempt.connectorTransactionId}`)).body.status).toBe('canceled');
    const { history } = dataOf(await merchant.secret(PaymentDocument, { id: created.id })).payment;
    expect(
      history
        .filter((row) => row.subject === 'attempt')
        .map((row) => row.toStatus)
        .slice(-4),
    ).toEqual(['AUTHENTICATION_SUCCESSFUL', 'AUTHORIZED', 'VOID_INITIATED', 'VOIDED']);
  });

  it('a cancel during 3DS after the customer was charged is INVALID_STATE naming SUCCEEDED: the void after capture is its own mutation', async () => {
    const created = await create();
    const pending = dataOf(await confirm(created.clientSecret, CARDS.threeDs)).confirmPayment;
    await fetch(pending.nextAction!.redirectToUrl);
    await fetch(`${pending.nextAction!.redirectToUrl}/complete`, { method: 'POST', redirect: 'manual' });
    const refused = errorOf(await merchant.secret(CancelPaymentDocument, { input: { paymentId: created.id } }), 'INVALID_STATE');
    expect(refused.extensions).toMatchObject({ status: 'SUCCEEDED' });
    const voided = dataOf(await merchant.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: created.id } })).cancelPaymentPostCapture;
    expect(voided).toMatchObject({ status: 'CANCELLED_POST_CAPTURE', amountReceived: 0 });
    const { history } = dataOf(await merchant.secret(PaymentDocument, { id: created.id })).payment;
    expect(
      history
        .filter((row) => row.subject === 'attempt')
        .map((row) => row.toStatus)
        .slice(-3),
    ).toEqual(['CHARGED', 'VOID_POST_CHARGE_INITIATED', 'VOIDED_POST_CHARGE']);
  });

  it('voids an authorization at the processor', async () => {
    const created = await create({ captureMethod: 'MANUAL' });
    const authorized = dataOf(await confirm(created.clientSecret, CARDS.visa)).confirmPayment;
    const cancelled = dataOf(await merchant.secret(CancelPaymentDocument, { input: { paymentId: created.id } })).cancelPayment;
    expect(cancelled.status).toBe('CANCELLED');
    expect((await merchant.sandboxPayment(`/${authorized.activeAttempt.connectorTransactionId}`)).body.status).toBe('canceled');
    const { history } = dataOf(await merchant.secret(PaymentDocument, { id: created.id })).payment;
    expect(
      history
        .filter((row) => row.subject === 'attempt')
        .map((row) => row.toStatus)
        .slice(-2),
    ).toEqual(['VOID_INITIATED', 'VOIDED']);
  });
});

describe('when the processor fails', () => {
  it('a capture the processor refuses (the authorization expired there) fails the capture: INVALID_STATE with its reason, not a 5xx', async () => {
    const created = await create({ captureMethod: 'MANUAL' });
    const authorized = dataOf(await confirm(created.clientSecret, CARDS.visa)).confirmPayment;
    // The authorization lapses at the processor, unknown to us.
    const lapsed = await fetch(`${stack.sandboxUrl}/v1/payments/${authorized.activeAttempt.connectorTransactionId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.sandboxKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(lapsed.status).toBe(200);
    const answer = await merchant.secret(CapturePaymentDocument, { input: { paymentId: created.id } });
    expect(answer.status).toBe(409);
    const error = errorOf(answer, 'INVALID_STATE');
    expect(error.message).toMatch(/^The processor refused the capture: /);
    expect(error.extensions).toMatchObject({ status: 'FAILED', paymentId: created.id, processorCode: expect.any(String) });
    const payment = await get(created.id);
    expect(payment.status).toBe('FAILED');
    expect(payment.activeAttempt.status).toBe('CAPTURE_FAILED');
  });

  it('a processor that cannot be reached fails the attempt with CONNECTOR_ERROR (nothing was sent)', async () => {
    const isolated = await startStack({ env: { SANDBOX_URL: `http://127.0.0.1:${await closedPort()}` } });
    try {
      const shop = await merchantWithSandbox(isolated);
      const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 500, currency: 'USD' } })).createPayment;
      const error = errorOf(
        await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) } }),
        'CONNECTOR_ERROR',
      );
      expect(error.extensions?.status).toBe('FAILED');
      const payment = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment;
      expect(payment.activeAttempt.status).toBe('AUTHORIZATION_FAILED');
    } finally {
      await isolated.close();
    }
  });

  it('a processor that refuses our credentials is the merchant’s setup, not a decline: CONNECTOR_ERROR, the attempt failed', async () => {
    // Answers every call as the sandbox answers a key it does not know.
    const refusing = await startReceiver(
      answer(
        401,
        JSON.stringify({ error: { code: 'invalid_api_key', message: 'Send Authorization: Bearer sk_sandbox_ followed by 8 to 64 letters or digits.' } }),
      ),
    );
    const isolated = await startStack({ env: { SANDBOX_URL: refusing.url } });
    try {
      const shop = await merchantWithSandbox(isolated);
      const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 500, currency: 'USD' } })).createPayment;
      const answered = await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) } });
      expect(answered.status).toBe(502);
      expect(errorOf(answered, 'CONNECTOR_ERROR').extensions?.status).toBe('FAILED');
      const payment = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment;
      expect(payment).toMatchObject({ errorCode: 'connector_error', processorErrorCode: 'invalid_api_key', activeAttempt: { status: 'AUTHORIZATION_FAILED' } });
    } finally {
      await isolated.close();
      await refusing.close();
    }
  });

  it('a processor timeout leaves the payment PROCESSING; a later sync learns the processor’s answer', async () => {
    // One impatient API process confirms; a patient one (same database, same processor) syncs afterwards.
    const slow = await startStack({ sandboxLatencyMs: 1000, env: { CONNECTOR_TIMEOUT_MS: '200' } });
    const patient = await startTestApi({ SANDBOX_URL: slow.sandboxUrl, CONNECTOR_TIMEOUT_MS: '10000' });
    try {
      const shop = await merchantWithSandbox(slow);
      const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
      const confirmed = dataOf(
        await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) } }),
      ).confirmPayment;
      expect(confirmed.status).toBe('PROCESSING');
      expect(confirmed.activeAttempt).toMatchObject({ status: 'PENDING', connectorTransactionId: null });
      await new Promise((resolve) => setTimeout(resolve, 1200)); // the processor finishes on its own time
      const synced = dataOf(await patient.as(shop.secretKey)(SyncPaymentDocument, { input: { paymentId: created.id } })).syncPayment;
      expect(synced.status).toBe('SUCCEEDED');
      expect(synced.activeAttempt.status).toBe('CHARGED');
      expect(synced.activeAttempt.connectorTransactionId).toMatch(/^sbx_pay_/);
    } finally {
      await patient.close();
      await slow.close();
    }
  });
});

describe('operations the state forbids', () => {
  type Operation = 'confirm' | 'capture' | 'cancel' | 'cancelPostCapture';
  const run: Record<Operation, (payment: { id: string; clientSecret: string }) => ReturnType<typeof merchant.secret>> = {
    confirm: (payment) => confirm(payment.clientSecret, CARDS.visa),
    capture: (payment) => merchant.secret(CapturePaymentDocument, { input: { paymentId: payment.id } }),
    cancel: (payment) => merchant.secret(CancelPaymentDocument, { input: { paymentId: payment.id } }),
    cancelPostCapture: (payment) => merchant.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: payment.id } }),
  };
  /** A payment in each status, and the operations that status forbids. */
  const STATES: { status: string; make: () => Promise<{ id: string; clientSecret: string }>; refuses: Operation[] }[] = [
    { status: 'REQUIRES_PAYMENT_METHOD', make: () => create(), refuses: ['capture', 'cancelPostCapture'] },
    { status: 'REQUIRES_CONFIRMATION', make: () => create({ paymentMethodData: card(CARDS.visa) }), refuses: ['capture', 'cancelPostCapture'] },
    {
      status: 'REQUIRES_CUSTOMER_ACTION',
      make: () => create({ confirm: true, paymentMethodData: card(CARDS.threeDs) }),
      refuses: ['confirm', 'capture', 'cancelPostCapture'],
    },
    {
      status: 'REQUIRES_CAPTURE',
      make: () => create({ confirm: true, captureMethod: 'MANUAL', paymentMethodData: card(CARDS.visa) }),
      refuses: ['confirm', 'cancelPostCapture'],
    },
    { status: 'SUCCEEDED', make: () => create({ confirm: true, paymentMethodData: card(CARDS.visa) }), refuses: ['confirm', 'capture', 'cancel'] },
    {
      status: 'PARTIALLY_CAPTURED',
      make: async () => {
        const payment = await create({ confirm: true, captureMethod: 'MANUAL', paymentMethodData: card(CARDS.visa) });
        dataOf(await merchant.secret(CapturePaymentDocument, { input: { paymentId: payment.id, amountToCapture: 400 } }));
        return payment;
      },
      refuses: ['confirm', 'capture', 'cancel', 'cancelPostCapture'],
    },
    {
      status: 'FAILED',
      make: async () => {
        const payment = await create();
        errorOf(await confirm(payment.clientSecret, CARDS.declined), 'PAYMENT_DECLINED');
        return payment;
      },
      refuses: ['capture', 'cancel', 'cancelPostCapture'],
    },
    {
      status: 'CANCELLED',
      make: async () => {
        const payment = await create();
        dataOf(await merchant.secret(CancelPaymentDocument, { input: { paymentId: payment.id } }));
        return payment;
      },
      refuses: ['confirm', 'capture', 'cancel', 'cancelPostCapture'],
    },
    {
      status: 'CANCELLED_POST_CAPTURE',
      make: async () => {
        const payment = await create({ confirm: true, paymentMethodData: card(CARDS.visa) });
        dataOf(await merchant.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: payment.id } }));
        return payment;
      },
      refuses: ['confirm', 'capture', 'cancel', 'cancelPostCapture'],
    },
  ];

  it.each(STATES)("$status: each operation it forbids is INVALID_STATE naming the payment's status, and changes nothing", async ({ status, make, refuses }) => {
    const payment = await make();
    const before = await get(payment.id);
    expect(before.status).toBe(status);
    for (const operation of refuses) {
      const error = errorOf(await run[operation](payment), 'INVALID_STATE');
      expect(error.extensions, operation).toMatchObject({ status });
      expect(error.message, operation).toContain(status);
    }
    expect(await get(payment.id)).toMatchObject({ status, version: before.version });
  });

  it('confirming without a payment method is INVALID_INPUT naming paymentMethodData, unless the state forbids confirming at all', async () => {
    for (const payment of [await create(), await create({ paymentMethodData: card(CARDS.visa) })]) {
      const missing = errorOf(await merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret } }), 'INVALID_INPUT');
      expect(missing.extensions).toMatchObject({ field: 'paymentMethodData' });
    }
    const succeeded = await create({ confirm: true, paymentMethodData: card(CARDS.visa) });
    const refused = errorOf(await merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret: succeeded.clientSecret } }), 'INVALID_STATE');
    expect(refused.extensions).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('a terminal payment never regresses: sync and the redirect route leave it as it is', async () => {
    const succeeded = await create({ confirm: true, paymentMethodData: card(CARDS.visa) });
    const synced = dataOf(await merchant.secret(SyncPaymentDocument, { input: { paymentId: succeeded.id } })).syncPayment;
    expect(synced).toMatchObject({ status: 'SUCCEEDED', version: succeeded.version });
    const back = await fetch(stack.api.services.payments.redirectReturnUrl(succeeded.id, succeeded.activeAttempt.id, 'sandbox'), { redirect: 'manual' });
    expect(back.status).toBe(302);
    expect((await get(succeeded.id)).version).toBe(succeeded.version);
  });
});

describe('concurrency and idempotency', () => {
  it('ten concurrent confirms of one payment cause exactly one processor authorization', async () => {
    const created = await create();
    const results = await Promise.all(Array.from({ length: 10 }, () => confirm(created.clientSecret, CARDS.visa)));
    const succeeded = results.filter((result) => result.data?.confirmPayment);
    expect(succeeded).toHaveLength(1);
    for (const result of results.filter((candidate) => candidate.errors)) {
      expect(['CONFLICT', 'INVALID_STATE']).toContain(result.errors![0]!.extensions?.code);
    }
    const payment = await get(created.id);
    const atProcessor = await merchant.sandboxPayment(`?reference=${payment.activeAttempt.id}`);
    expect(atProcessor.status).toBe(200);
    const { rows } = await sql.query(
      "SELECT count(*)::int AS n FROM payment_status_history WHERE payment_id = $1 AND subject = 'attempt' AND trigger = 'confirm'",
      [created.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('concurrent captures capture once', async () => {
    const created = await create({ captureMethod: 'MANUAL' });
    dataOf(await confirm(created.clientSecret, CARDS.visa));
    const results = await Promise.all(Array.from({ length: 5 }, () => merchant.secret(CapturePaymentDocument, { input: { paymentId: created.id } })));
    expect(results.filter((result) => result.data?.capturePayment)).toHaveLength(1);
    expect((await get(created.id)).amountReceived).toBe(1000);
  });

  it('replays the first response for the same Idempotency-Key and input, and refuses other input', async () => {
    const key = `order-${Date.now()}`;
    const input = { amount: 2500, currency: 'EUR', description: 'idempotent' };
    const first = await merchant.secret(CreatePaymentDocument, { input }, { 'idempotency-key': key });
    const second = await merchant.secret(CreatePaymentDocument, { input }, { 'idempotency-key': key });
    expect(dataOf(second).createPayment.id).toBe(dataOf(first).createPayment.id);
    const other = await merchant.secret(CreatePaymentDocument, { input: { ...input, amount: 2600 } }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
    errorOf(other, 'IDEMPOTENCY_MISMATCH');
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM payment_intents WHERE merchant_id = $1 AND description = 'idempotent'", [
      merchant.merchantId,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('does not keep a response that did not execute, so a corrected retry with the key works', async () => {
    const key = `retry-${Date.now()}`;
    errorOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 0, currency: 'USD' } }, { 'idempotency-key': key }), 'INVALID_INPUT');
    const fixed = await merchant.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'USD' } }, { 'idempotency-key': key });
    expect(dataOf(fixed).createPayment.amount).toBe(100);
  });

  it('a confirm replayed with its Idempotency-Key does not reach the processor twice', async () => {
    const created = await create();
    const key = `confirm-${created.id}`;
    const headers = { 'idempotency-key': key };
    const first = await merchant.publishable(
      ConfirmPaymentDocument,
      { input: { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) } },
      headers,
    );
    const again = await merchant.publishable(
      ConfirmPaymentDocument,
      { input: { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) } },
      headers,
    );
    expect(dataOf(again).confirmPayment).toEqual(dataOf(first).confirmPayment);
  });
});

it('a repeat while the first request with the Idempotency-Key still runs gets CONFLICT', async () => {
  const slow = await startStack({ sandboxLatencyMs: 600 });
  try {
    const shop = await merchantWithSandbox(slow);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 300, currency: 'USD' } })).createPayment;
    const input = { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) };
    const headers = { 'idempotency-key': `slow-${created.id}` };
    const first = shop.publishable(ConfirmPaymentDocument, { input }, headers);
    await new Promise((resolve) => setTimeout(resolve, 150)); // the first is now waiting on the processor
    const repeat = await shop.publishable(ConfirmPaymentDocument, { input }, headers);
    expect(repeat.status).toBe(409);
    errorOf(repeat, 'CONFLICT');
    expect(dataOf(await first).confirmPayment.status).toBe('SUCCEEDED');
    const replay = await shop.publishable(ConfirmPaymentDocument, { input }, headers);
    expect(dataOf(replay).confirmPayment.status).toBe('SUCCEEDED');
  } finally {
    await slow.close();
  }
});

describe('who may see and do what', () => {
  it('the SDK needs the payment’s own client secret; other merchants see nothing', async () => {
    const created = await create();
    const other = await create();
    errorOf(await merchant.publishable(PaymentDocument, { id: created.id }), 'FORBIDDEN');
    errorOf(await merchant.publishable(PaymentDocument, { id: created.id, clientSecret: other.clientSecret }), 'FORBIDDEN');
    expect(dataOf(await merchant.publishable(PaymentDocument, { id: created.id, clientSecret: created.clientSecret })).payment.id).toBe(created.id);
    errorOf(
      await merchant.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: `${created.id}_secret_forged000000000000000`, paymentMethodData: card(CARDS.visa) },
      }),
      'UNAUTHENTICATED',
    );
    errorOf(await merchant.publishable(CapturePaymentDocument, { input: { paymentId: created.id } }), 'FORBIDDEN');
    const stranger = await merchantWithSandbox(stack);
    errorOf(await stranger.secret(PaymentDocument, { id: created.id }), 'NOT_FOUND');
    errorOf(
      await stranger.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(CARDS.visa) } }),
      'NOT_FOUND',
    );
    expect((await get(created.id)).status).toBe('REQUIRES_PAYMENT_METHOD');
  });

  it('never stores a card number or CVC', async () => {
    const key = `card-data-${Date.now()}`;
    const created = await create({ confirm: true, paymentMethodData: { card: { ...card(CARDS.visa).card, cvc: '987' } } }, { 'idempotency-key': key });
    // Every row this request wrote, every column as text. Only its rows: test files share the database
    // (vitest.config.ts), so the whole tables would hold whatever other tests wrote. Not the history's id: a
    // sequence's number, which is 987 itself once the database has recorded that many transitions.
    const scans: [table: string, query: string, value: string][] = [
      ['payment_intents', 'SELECT t::text AS row FROM payment_intents t WHERE id = $1', created.id],
      ['payment_attempts', 'SELECT t::text AS row FROM payment_attempts t WHERE payment_id = $1', created.id],
      ['payment_status_history', "SELECT (to_jsonb(t) - 'id')::text AS row FROM payment_status_history t WHERE payment_id = $1", created.id],
      ['idempotency_records', 'SELECT t::text AS row FROM idempotency_records t WHERE key = $1', key],
    ];
    for (const [table, query, value] of scans) {
      const { rows } = await sql.query(query, [value]);
      expect(rows.length, table).toBeGreaterThan(0);
      const text = rows.map((row) => row.row).join('\n');
      expect(text, table).not.toContain(CARDS.visa);
      // The CVC as a value of its own, not the digits inside an id, a ciphertext or a timestamp's milliseconds.
      expect(text, table).not.toMatch(/"cvc"|(^|[\s,"(])987($|[\s,")])/);
    }
  });
});

describe('input rules', () => {
  it.each([
    [{ amount: 0 }, 'amount'],
    [{ amount: -5 }, 'amount'],
    [{ amount: 100_000_000 }, 'amount'],
    [{ currency: 'XYZ' }, 'currency'],
    [{ returnUrl: 'javascript:alert(1)' }, 'returnUrl'],
    [{ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, 'v'])) }, 'metadata'],
    [{ paymentMethodData: { card: { number: '4242424242424241', expiryMonth: 12, expiryYear: 2040, cvc: '123' } } }, 'paymentMethodData.card.number'],
    [{ paymentMethodData: { card: { number: CARDS.visa, expiryMonth: 13, expiryYear: 2040, cvc: '123' } } }, 'paymentMethodData.card.expiryMonth'],
    [{ confirm: true }, 'paymentMethodData'],
    [{ connectors: ['nope'] }, 'connectors.0'],
    [{ profileId: 'pro_unknown' }, 'profileId'],
  ] as [Partial<CreatePaymentInput>, string][])('rejects %j naming %s, and creates nothing', async (fields, field) => {
    const description = `invalid-${field}-${Math.random()}`;
    const error = errorOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'USD', description, ...fields } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe(field);
    expect(error.message).not.toContain(CARDS.visa);
    const { rows } = await sql.query('SELECT count(*)::int AS n FROM payment_intents WHERE description = $1', [description]);
    expect(rows[0].n).toBe(0);
  });

  it('validates amounts by the currency’s exponent: zero-decimal and three-decimal currencies', async () => {
    expect((await create({ amount: 500, currency: 'JPY' })).currency).toBe('JPY');
    expect((await create({ amount: 1234, currency: 'kwd' })).currency).toBe('KWD');
  });
});

describe('payments list', () => {
  it('pages newest first with cursors and filters by status and customer', async () => {
    const customerId = `cus_list_${Date.now()}`;
    const ids = [];
    for (let index = 0; index < 5; index += 1) ids.push((await create({ customerId, amount: 100 + index })).id);
    const firstPage = dataOf(await merchant.secret(PaymentsDocument, { first: 2, customerId })).payments;
    expect(firstPage.edges.map((edge) => edge.node.id)).toEqual([ids[4], ids[3]]);
    expect(firstPage.pageInfo.hasNextPage).toBe(true);
    const rest = dataOf(await merchant.secret(PaymentsDocument, { first: 10, customerId, after: firstPage.pageInfo.endCursor })).payments;
    expect(rest.edges.map((edge) => edge.node.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(rest.pageInfo.hasNextPage).toBe(false);
    const succeeded = dataOf(await merchant.secret(PaymentsDocument, { first: 100, status: 'SUCCEEDED' })).payments.edges;
    expect(succeeded.length).toBeGreaterThan(0);
    expect(succeeded.every((edge) => edge.node.status === 'SUCCEEDED')).toBe(true);
  });
});

describe('the seed tables', () => {
  it('every seed row of both machines was driven through the API by the scenarios above', async () => {
    const { rows } = await sql.query<{ subject: string; from_status: string | null; to_status: string; trigger: string }>(
      'SELECT DISTINCT subject, from_status, to_status, trigger FROM payment_status_history WHERE payment_id = ANY($1)',
      [paymentIds],
    );
    const seen = new Set(rows.map((row) => `${row.subject}:${row.from_status}>${row.to_status}`));
    const seenTriggers = new Set(rows.filter((row) => row.subject === 'attempt').map((row) => `${row.from_status}>${row.to_status}:${row.trigger}`));
    for (const row of ATTEMPT_TRANSITIONS.filter((transition) => transition.source === 'seed')) {
      expect(seenTriggers.has(`${row.from}>${row.to}:${row.trigger}`), `attempt ${row.from} --${row.trigger}--> ${row.to}`).toBe(true);
    }
    for (const row of INTENT_TRANSITIONS.filter((transition) => transition.source === 'seed')) {
      // Capture (requested, then done at the processor) and authentication (succeeded, then the capture method
      // selected) pass through PROCESSING, as in Hyperswitch: the seed row is realised by the two steps.
      const observed = seen.has(`intent:${row.from}>${row.to}`) || (seen.has(`intent:${row.from}>PROCESSING`) && seen.has(`intent:PROCESSING>${row.to}`));
      expect(observed, `intent ${row.from} --${row.trigger} (${row.condition ?? ''})--> ${row.to}`).toBe(true);
    }
  });
});
