// Refunds end to end over HTTP: the API, the sandbox processor (its immediate, delayed, failing and reviewed
// refunds), its signed callbacks, the sync schedule, the outgoing refund_* webhooks, and the money rule under
// concurrency (never more refunded than captured).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { webhooks } from '../../packages/node/src/webhooks/index.ts';
import {
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  PaymentRefundsDocument,
  RefundDocument,
  RefundsDocument,
  SyncRefundDocument,
} from '../gql/graphql.ts';
import { newId } from '../../src/kernel/ids.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { eventReaching, shopWithReceiver, type Shop } from '../support/webhooks.ts';
import { sandboxSignature } from '../support/sandbox-signature.ts';
import { whileRowHeld } from '../support/row-lock.ts';

let stack: Stack;
let sql: pg.Client;
beforeAll(async () => {
  // Delayed refunds settle after 300 ms and their callbacks follow at once; the worker's first scheduled
  // sync comes after 1.5 s (1/10 of the schedule), so whatever moves a refund sooner is the callback.
  stack = await startStack({ sandboxRefundSettleMs: 300, env: { PAYMENT_SYNC_DELAY_SCALE: '0.1' } });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

const card = (number = '4242424242424242') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

type AnyShop = Pick<Shop, 'secret' | 'publishable'>;

/** A payment of `amount` paid with `number` (captured at once unless `manual`). */
async function paid(shop: AnyShop, number = '4242424242424242', amount = 1250, manual = false) {
  const created = dataOf(
    await shop.secret(CreatePaymentDocument, { input: { amount, currency: 'USD', ...(manual ? { captureMethod: 'MANUAL' as const } : {}) } }),
  ).createPayment;
  return dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } }))
    .confirmPayment;
}

const refund = async (shop: AnyShop, paymentId: string, amount?: number) =>
  await shop.secret(CreateRefundDocument, { input: { paymentId, ...(amount === undefined ? {} : { amount }) } });
const readRefund = async (shop: AnyShop, id: string) => dataOf(await shop.secret(RefundDocument, { id })).refund;
const paymentRefunds = async (shop: AnyShop, id: string) => dataOf(await shop.secret(PaymentRefundsDocument, { id })).payment!;

/** A shop whose sandbox account sends its callbacks to the API (registered) and whose webhooks go to a receiver. */
async function shopWithCallbacks(): Promise<Shop> {
  const shop = await shopWithReceiver(stack);
  const response = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
    method: 'POST',
    headers: { 'api-key': shop.secretKey },
  });
  expect(response.status).toBe(200);
  return shop;
}

const refundRows = async (paymentId: string) =>
  (await sql.query<{ status: string; amount: number }>('SELECT status, amount FROM refunds WHERE payment_id = $1', [paymentId])).rows;
const amountRefundedColumn = async (paymentId: string) =>
  (await sql.query<{ amount_refunded: number }>('SELECT amount_refunded FROM payment_intents WHERE id = $1', [paymentId])).rows[0]!.amount_refunded;

describe('refunds of a captured payment', () => {
  let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
  beforeAll(async () => {
    shop = await merchantWithSandbox(stack);
  });

  it('refunds in full when no amount is given, and nothing more after', async () => {
    const payment = await paid(shop);
    const full = dataOf(await refund(shop, payment.id)).createRefund;
    expect(full).toMatchObject({
      paymentId: payment.id,
      status: 'SUCCEEDED',
      amount: 1250,
      currency: 'USD',
      connector: 'sandbox',
      errorCode: null,
      version: 1,
    });
    expect(full.connectorRefundId).toMatch(/^sbx_re_/);
    expect(await paymentRefunds(shop, payment.id)).toMatchObject({
      amountReceived: 1250,
      amountRefunded: 1250,
      refunds: [{ id: full.id, status: 'SUCCEEDED', amount: 1250 }],
    });
    const none = errorOf(await refund(shop, payment.id), 'INVALID_INPUT');
    expect(none.extensions).toMatchObject({ field: 'amount' });
    expect(none.message).toMatch(/nothing is left to refund/);
    expect(await refundRows(payment.id)).toHaveLength(1);
  });

  it('takes several partial refunds up to the captured amount and names the limit beyond it', async () => {
    const payment = await paid(shop);
    for (const amount of [500, 500]) expect(dataOf(await refund(shop, payment.id, amount)).createRefund.status).toBe('SUCCEEDED');
    const over = errorOf(await refund(shop, payment.id, 300), 'INVALID_INPUT');
    expect(over.message).toBe('amount: must be at most 250, the captured amount not yet refunded or held by pending refunds');
    expect(dataOf(await refund(shop, payment.id, 250)).createRefund.amount).toBe(250);
    const list = dataOf(await shop.secret(RefundsDocument, { paymentId: payment.id })).refunds;
    expect(list.map(({ amount, status }) => [amount, status])).toEqual([
      [500, 'SUCCEEDED'],
      [500, 'SUCCEEDED'],
      [250, 'SUCCEEDED'],
    ]);
    expect(await amountRefundedColumn(payment.id)).toBe(1250);
  });

  it('refunds only what a partial capture took', async () => {
    const authorized = await paid(shop, '4242424242424242', 1000, true);
    expect(authorized.status).toBe('REQUIRES_CAPTURE');
    errorOf(await refund(shop, authorized.id, 100), 'INVALID_STATE');
    const captured = dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: authorized.id, amountToCapture: 600 } })).capturePayment;
    expect(captured.status).toBe('PARTIALLY_CAPTURED');
    expect(errorOf(await refund(shop, authorized.id, 601), 'INVALID_INPUT').message).toMatch(/at most 600/);
    expect(dataOf(await refund(shop, authorized.id)).createRefund.amount).toBe(600);
  });

  it.each([
    ['zero', 0, 'must be at least 1'],
    ['negative', -5, 'must be at least 1'],
  ])('refuses a %s amount, naming the field, and writes nothing', async (_name, amount, rule) => {
    const payment = await paid(shop);
    const error = errorOf(await refund(shop, payment.id, amount), 'INVALID_INPUT');
    expect(error.extensions).toMatchObject({ field: 'amount' });
    expect(error.message).toContain(rule);
    expect(await refundRows(payment.id)).toEqual([]);
    expect(await amountRefundedColumn(payment.id)).toBe(0);
  });

  it('refuses payments that captured nothing, other merchants’ payments and publishable keys', async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'USD' } })).createPayment;
    expect(errorOf(await refund(shop, created.id), 'INVALID_STATE').extensions).toMatchObject({ status: 'REQUIRES_PAYMENT_METHOD' });
    const other = await merchantWithSandbox(stack);
    const theirs = await paid(other);
    errorOf(await refund(shop, theirs.id), 'NOT_FOUND');
    const mine = await paid(shop);
    errorOf(await shop.publishable(CreateRefundDocument, { input: { paymentId: mine.id } }), 'FORBIDDEN');
    const made = dataOf(await refund(shop, mine.id, 10)).createRefund;
    errorOf(await other.secret(RefundDocument, { id: made.id }), 'NOT_FOUND');
    expect(await refundRows(theirs.id)).toEqual([]);
  });

  it('never refunds more than was captured under 50 concurrent partial refunds', async () => {
    const payment = await paid(shop);
    const results = await Promise.all(Array.from({ length: 50 }, () => refund(shop, payment.id, 100)));
    const succeeded = results.filter((result) => result.data?.createRefund?.status === 'SUCCEEDED');
    const refused = results.filter((result) => result.errors?.[0]?.extensions?.['code'] === 'INVALID_INPUT');
    expect(succeeded).toHaveLength(12);
    expect(refused).toHaveLength(38);
    expect(await amountRefundedColumn(payment.id)).toBe(1200);
    const rows = await refundRows(payment.id);
    expect(rows.reduce((sum, row) => sum + row.amount, 0)).toBe(1200);
    // The processor agrees: it refunded exactly what the service says.
    const processor = await (
      await fetch(`${stack.sandboxUrl}/v1/payments/${payment.activeAttempt.connectorTransactionId}`, {
        headers: { authorization: `Bearer ${shop.sandboxKey}` },
      })
    ).json();
    expect(processor.amount_captured).toBe(1250);
  });

  it('refuses a refund that waited on the payment while a dispute of it was committed, and reserves nothing', async () => {
    const payment = await paid(shop);
    const refunding = whileRowHeld(
      sql,
      payment.id,
      () => refund(shop, payment.id, 100),
      async (holder) => {
        // The dispute is opened as the dispute service opens one: its row and the payment's version, committed together.
        await holder.query(
          `INSERT INTO disputes (id, payment_id, merchant_id, profile_id, mode, attempt_id, connector_account_id, connector_name, connector_dispute_id, status, amount, currency)
         SELECT $2, p.id, p.merchant_id, p.profile_id, p.mode, a.id, a.connector_account_id, a.connector_name, $3, 'OPENED', p.amount_received, p.currency
         FROM payment_intents p JOIN payment_attempts a ON a.id = p.active_attempt_id WHERE p.id = $1`,
          [payment.id, newId('dispute'), `sbx_dp_${randomBytes(8).toString('hex')}`],
        );
        await holder.query('UPDATE payment_intents SET version = version + 1 WHERE id = $1', [payment.id]);
      },
    );
    expect(errorOf(await refunding, 'INVALID_STATE').message).toMatch(/a refund would return the money twice/);
    expect(await amountRefundedColumn(payment.id)).toBe(0);
    expect(await refundRows(payment.id)).toEqual([]);
  });

  it('refunds what is left once it has the payment, when a full refund waited while another refund reserved part of it', async () => {
    const payment = await paid(shop);
    const full = await whileRowHeld(
      sql,
      payment.id,
      () => refund(shop, payment.id),
      async (holder) => {
        // Another refund's reservation of 400 commits meanwhile, as the refund service reserves one.
        await holder.query('UPDATE payment_intents SET amount_refunded = amount_refunded + 400, version = version + 1 WHERE id = $1', [payment.id]);
      },
    );
    expect(dataOf(full).createRefund).toMatchObject({ status: 'SUCCEEDED', amount: 850 });
    expect(await amountRefundedColumn(payment.id)).toBe(1250);
  });
});

describe('refunds the processor decides later', () => {
  let shop: Shop;
  beforeAll(async () => {
    shop = await shopWithCallbacks();
  });

  it('pending, then succeeded by the sandbox’s signed callback, with one refund_succeeded webhook', async () => {
    const payment = await paid(shop, '4000000000007726');
    const pending = dataOf(await refund(shop, payment.id, 700)).createRefund;
    expect(pending.status).toBe('PENDING');
    expect((await paymentRefunds(shop, payment.id)).amountRefunded).toBe(700);
    await vi.waitFor(async () => expect((await readRefund(shop, pending.id))?.status).toBe('SUCCEEDED'), { timeout: 5000, interval: 50 });
    const event = await eventReaching(shop, pending.id, 'REFUND_SUCCEEDED', 'DELIVERED');
    const delivered = shop.receiver.received.find((request) => request.body.toString().includes(event.id))!;
    webhooks.verify(delivered.body, delivered.headers, shop.paymentResponseHashKey);
    const body = JSON.parse(delivered.body.toString());
    expect(body).toMatchObject({
      event_type: 'refund_succeeded',
      content: {
        type: 'refund_details',
        object: { refund_id: pending.id, payment_id: payment.id, status: 'succeeded', amount: 700, currency: 'USD', connector: 'sandbox', version: 1 },
      },
    });
    const callbacks = await sql.query<{ outcome: string }>(
      `SELECT outcome FROM connector_callbacks WHERE processor_event_type = 'refund.succeeded' AND connector_account_id = $1`,
      [shop.connectorAccountId],
    );
    expect(callbacks.rows.map((row) => row.outcome)).toContain('applied');
  });

  it('pending, then failed: the amount is given back and refund_failed is sent', async () => {
    const payment = await paid(shop, '4000000000005126');
    const pending = dataOf(await refund(shop, payment.id)).createRefund;
    expect(pending).toMatchObject({ status: 'PENDING', amount: 1250 });
    errorOf(await refund(shop, payment.id, 1), 'INVALID_INPUT');
    await vi.waitFor(async () => expect((await readRefund(shop, pending.id))?.status).toBe('FAILED'), { timeout: 5000, interval: 50 });
    expect(await readRefund(shop, pending.id)).toMatchObject({ errorCode: 'refund_failed', errorMessage: 'The bank could not return the funds.' });
    expect(await amountRefundedColumn(payment.id)).toBe(0);
    await eventReaching(shop, pending.id, 'REFUND_FAILED', 'DELIVERED');
  });

  it('held for review (refund_review), then approved at the processor', async () => {
    const payment = await paid(shop, '4000000000006975');
    const held = dataOf(await refund(shop, payment.id, 400)).createRefund;
    expect(held.status).toBe('REVIEW');
    await eventReaching(shop, held.id, 'REFUND_REVIEW', 'DELIVERED');
    const approve = await fetch(`${stack.sandboxUrl}/v1/test_helpers/refunds/${held.connectorRefundId}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(approve.status).toBe(200);
    await vi.waitFor(async () => expect((await readRefund(shop, held.id))?.status).toBe('SUCCEEDED'), { timeout: 5000, interval: 50 });
    await eventReaching(shop, held.id, 'REFUND_SUCCEEDED', 'DELIVERED');
    expect(await amountRefundedColumn(payment.id)).toBe(400);
  });

  it('ignores a replayed or older callback once the refund is final', async () => {
    const secret = `whsec_${randomBytes(16).toString('hex')}`;
    const own = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
    const payment = await paid(own);
    const done = dataOf(await refund(own, payment.id, 300)).createRefund;
    expect(done.status).toBe('SUCCEEDED');
    const send = async (status: string) => {
      const body = JSON.stringify({
        id: `evt_${randomBytes(6).toString('hex')}`,
        type: `refund.${status}`,
        created: Math.floor(Date.now() / 1000),
        data: {
          object: {
            id: done.connectorRefundId,
            object: 'refund',
            payment: payment.activeAttempt.connectorTransactionId,
            amount: 300,
            currency: 'usd',
            status,
            reason: null,
            reference: done.id,
            error: null,
            created: 0,
            updated_ms: 0,
          },
        },
      });
      const response = await fetch(`${stack.api.url}/webhooks/${own.merchantId}/${own.connectorAccountId}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'sandbox-signature': sandboxSignature(body, secret) },
      });
      return { status: response.status, body: await response.json() };
    };
    expect(await send('pending')).toEqual({ status: 200, body: { received: true, outcome: 'duplicate_or_stale' } });
    expect(await send('failed')).toEqual({ status: 200, body: { received: true, outcome: 'duplicate_or_stale' } });
    expect(await readRefund(own, done.id)).toMatchObject({ status: 'SUCCEEDED', version: 1 });
    expect(await amountRefundedColumn(payment.id)).toBe(300);
  });
});

describe('refunds at a processor without callbacks', () => {
  it('are synced by the schedule', async () => {
    const shop = await merchantWithSandbox(stack, 'fauxpay');
    const payment = await paid(shop, '4000000000007726');
    const scheduled = dataOf(await refund(shop, payment.id, 200)).createRefund;
    expect(scheduled.status).toBe('PENDING');
    // The worker's schedule syncs it once the processor has decided.
    await vi.waitFor(async () => expect((await readRefund(shop, scheduled.id))?.status).toBe('SUCCEEDED'), { timeout: 10_000, interval: 100 });
  });

  describe('with no scheduled sync due while the test runs', () => {
    // The schedule's first sync comes 15 s after the refund (an unscaled schedule), after the 10 s this test
    // waits at most: whatever moves the refund is syncRefund itself, however slowly this machine runs the test.
    let unscheduled: Stack;
    beforeAll(async () => {
      unscheduled = await startStack({ sandboxRefundSettleMs: 300 });
    });
    afterAll(() => unscheduled.close());

    it('are synced by syncRefund on demand', async () => {
      const shop = await merchantWithSandbox(unscheduled, 'fauxpay');
      const payment = await paid(shop, '4000000000007726');
      const manual = dataOf(await refund(shop, payment.id, 100)).createRefund;
      expect(manual.status).toBe('PENDING');
      await vi.waitFor(
        async () => expect(dataOf(await shop.secret(SyncRefundDocument, { input: { refundId: manual.id } })).syncRefund.status).toBe('SUCCEEDED'),
        { timeout: 10_000, interval: 100 },
      );
      expect((await readRefund(shop, manual.id))?.status).toBe('SUCCEEDED');
    });
  });
});

describe('refund webhooks reach the merchant', () => {
  let receiver: Receiver;
  afterAll(async () => receiver?.close());

  it('a refund that succeeds at once sends refund_succeeded with the refund object', async () => {
    receiver = await startReceiver();
    const shop = await shopWithReceiver(stack, receiver);
    const payment = await paid(shop);
    const made = dataOf(await refund(shop, payment.id, 125)).createRefund;
    const event = await eventReaching(shop, made.id, 'REFUND_SUCCEEDED', 'DELIVERED');
    const body = receiver.bodies().find((candidate) => candidate.event_id === event.id)!;
    expect(body.content.type).toBe('refund_details');
    expect(Object.keys(body.content.object).sort()).toEqual(
      [
        'amount',
        'attempt_id',
        'connector',
        'connector_refund_id',
        'created',
        'currency',
        'error_code',
        'error_message',
        'livemode',
        'merchant_id',
        'payment_id',
        'profile_id',
        'reason',
        'refund_id',
        'status',
        'updated',
        'version',
      ].sort(),
    );
  });
});
