// Disputes end to end over HTTP: the sandbox opens them (a test card, or its test helper) and tells the
// service with signed callbacks; the merchant accepts or challenges through the API; the network's decision
// (the sandbox's test helpers) comes back by callback; every status reaches the merchant as a dispute_* webhook.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  AcceptDisputeDocument,
  ChallengeDisputeDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  DisputeDocument,
  DisputesDocument,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';
import { sandboxSignature } from '../support/sandbox-signature.ts';

let stack: Stack;
let shop: Shop;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack({ sandboxDisputeOpenMs: 200 });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
  shop = await shopWithReceiver(stack);
  const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
    method: 'POST',
    headers: { 'api-key': shop.secretKey },
  });
  expect(registered.status).toBe(200);
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

const card = (number = '4242424242424242') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

async function paid(number = '4242424242424242') {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 5000, currency: 'EUR' } })).createPayment;
  return dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } }))
    .confirmPayment;
}

/** POSTs one of the sandbox's test helpers (the network deciding) as the shop's processor account. */
async function sandboxHelper(path: string, body: unknown = {}) {
  const response = await fetch(`${stack.sandboxUrl}/v1/test_helpers/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string; status: string };
}

/** The service's dispute of `payment`, once the sandbox's callback has opened it. */
async function disputeOf(paymentId: string) {
  return vi.waitFor(
    async () => {
      const [dispute] = dataOf(await shop.secret(DisputesDocument, { paymentId })).disputes;
      expect(dispute).toBeDefined();
      return dispute!;
    },
    { timeout: 5000, interval: 50 },
  );
}

async function opened(amount?: number) {
  const payment = await paid();
  await sandboxHelper(`payments/${payment.activeAttempt.connectorTransactionId}/dispute`, { ...(amount ? { amount } : {}), reason: 'product_not_received' });
  return { payment, dispute: await disputeOf(payment.id) };
}

const statusOf = async (id: string) => dataOf(await shop.secret(DisputeDocument, { id })).dispute?.status;

describe('disputes', () => {
  it('are opened by the processor’s callback with amount, reason and deadline, and sent as dispute_opened', async () => {
    const { payment, dispute } = await opened(1200);
    expect(dispute).toMatchObject({
      paymentId: payment.id,
      status: 'OPENED',
      amount: 1200,
      currency: 'EUR',
      reason: 'product_not_received',
      connector: 'sandbox',
      evidence: null,
    });
    expect(new Date(dispute.evidenceDueBy!).getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);
    const event = await eventReaching(shop, dispute.id, 'DISPUTE_OPENED', 'DELIVERED');
    const body = shop.receiver.bodies().find((candidate) => candidate.event_id === event.id)!;
    expect(body.content).toMatchObject({
      type: 'dispute_details',
      object: {
        dispute_id: dispute.id,
        payment_id: payment.id,
        amount: 1200,
        currency: 'EUR',
        dispute_status: 'dispute_opened',
        connector_reason: 'product_not_received',
        evidence_submitted: false,
      },
    });
  });

  it('change the payment they are opened on, so a void after capture that read it before cannot go on', async () => {
    const payment = await paid();
    const readBefore = (await stack.api.services.payments.store.find(payment.id))!;
    await sandboxHelper(`payments/${payment.activeAttempt.connectorTransactionId}/dispute`, { reason: 'fraudulent' });
    await disputeOf(payment.id);
    // The void's commit is guarded by the version it read: the dispute's opening moved it on.
    await expect(stack.api.services.payments.store.commit(readBefore, { moves: [], actor: 'test' })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('opens on its own for the sandbox’s disputed test card', async () => {
    const payment = await paid('4000000000000259');
    const dispute = await disputeOf(payment.id);
    expect(dispute).toMatchObject({ status: 'OPENED', amount: 5000, reason: 'fraudulent' });
  });

  it('accepted by the merchant (dispute_accepted), and then closed to any other answer', async () => {
    const { dispute } = await opened();
    const accepted = dataOf(await shop.secret(AcceptDisputeDocument, { input: { disputeId: dispute.id } })).acceptDispute;
    expect(accepted).toMatchObject({ status: 'ACCEPTED', version: 1 });
    await eventReaching(shop, dispute.id, 'DISPUTE_ACCEPTED', 'DELIVERED');
    expect(errorOf(await shop.secret(AcceptDisputeDocument, { input: { disputeId: dispute.id } }), 'INVALID_STATE').extensions).toMatchObject({
      status: 'ACCEPTED',
    });
    errorOf(await shop.secret(ChallengeDisputeDocument, { input: { disputeId: dispute.id, evidence: { receipt: 'r' } } }), 'INVALID_STATE');
  });

  it.each([
    ['win', 'WON', 'DISPUTE_WON'],
    ['lose', 'LOST', 'DISPUTE_LOST'],
    ['cancel', 'CANCELLED', 'DISPUTE_CANCELLED'],
  ] as const)('challenged with evidence (dispute_challenged), then the network decides: %s', async (helper, status, eventType) => {
    const { dispute } = await opened();
    const evidence = { receipt: 'Order 1234 shipped 2026-11-01', shipping_tracking_number: '1Z999AA10123456784' };
    const challenged = dataOf(await shop.secret(ChallengeDisputeDocument, { input: { disputeId: dispute.id, evidence } })).challengeDispute;
    expect(challenged).toMatchObject({ status: 'CHALLENGED', evidence });
    await eventReaching(shop, dispute.id, 'DISPUTE_CHALLENGED', 'DELIVERED');
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/${helper}`);
    await vi.waitFor(async () => expect(await statusOf(dispute.id)).toBe(status), { timeout: 5000, interval: 50 });
    await eventReaching(shop, dispute.id, eventType, 'DELIVERED');
  });

  it.each([
    ['expire', 'EXPIRED', 'DISPUTE_EXPIRED'],
    ['cancel', 'CANCELLED', 'DISPUTE_CANCELLED'],
  ] as const)('left unanswered, the network decides: %s', async (helper, status, eventType) => {
    const { dispute } = await opened();
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/${helper}`);
    await vi.waitFor(async () => expect(await statusOf(dispute.id)).toBe(status), { timeout: 5000, interval: 50 });
    await eventReaching(shop, dispute.id, eventType, 'DELIVERED');
  });

  it.each([
    [{}, 'evidence', 'must have 1 to 20'],
    [[], 'evidence', 'must be an object'],
    [{ 'Bad Key': 'x' }, 'evidence', 'field names must be'],
    [{ receipt: '' }, 'evidence.receipt', 'must be text of 1 to 5000'],
    [{ receipt: 'x'.repeat(5001) }, 'evidence.receipt', 'must be text of 1 to 5000'],
    [{ receipt: 5 }, 'evidence.receipt', 'must be text'],
  ])('refuses evidence %j naming %s, and changes nothing', async (evidence, field, rule) => {
    const { dispute } = await opened();
    const error = errorOf(await shop.secret(ChallengeDisputeDocument, { input: { disputeId: dispute.id, evidence } }), 'INVALID_INPUT');
    expect(error.extensions).toMatchObject({ field });
    expect(error.message).toContain(rule);
    expect(await statusOf(dispute.id)).toBe('OPENED');
  });

  it('keep their payment from being refunded while they may take the money back; a won one does not', async () => {
    const { payment, dispute } = await opened();
    const refused = errorOf(await shop.secret(CreateRefundDocument, { input: { paymentId: payment.id, amount: 100 } }), 'INVALID_STATE');
    expect(refused.message).toMatch(/a refund would return the money twice/);
    dataOf(await shop.secret(ChallengeDisputeDocument, { input: { disputeId: dispute.id, evidence: { receipt: 'r' } } }));
    errorOf(await shop.secret(CreateRefundDocument, { input: { paymentId: payment.id, amount: 100 } }), 'INVALID_STATE');
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/win`);
    await vi.waitFor(async () => expect(await statusOf(dispute.id)).toBe('WON'), { timeout: 5000, interval: 50 });
    expect(dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: payment.id, amount: 100 } })).createRefund.status).toBe('SUCCEEDED');
  });

  it('is another merchant’s NOT_FOUND, and a publishable key’s FORBIDDEN', async () => {
    const { dispute } = await opened();
    const other = await merchantWithSandbox(stack);
    errorOf(await other.secret(DisputeDocument, { id: dispute.id }), 'NOT_FOUND');
    errorOf(await other.secret(AcceptDisputeDocument, { input: { disputeId: dispute.id } }), 'NOT_FOUND');
    errorOf(await shop.publishable(AcceptDisputeDocument, { input: { disputeId: dispute.id } }), 'FORBIDDEN');
    expect(await statusOf(dispute.id)).toBe('OPENED');
  });
});

describe('dispute callbacks crafted as a processor would send them', () => {
  const secret = `whsec_${randomBytes(16).toString('hex')}`;
  let own: Awaited<ReturnType<typeof merchantWithSandbox>>;
  beforeAll(async () => {
    own = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
  });

  const send = async (dispute: Record<string, unknown>) => {
    const body = JSON.stringify({
      id: `evt_${randomBytes(6).toString('hex')}`,
      type: `dispute.${dispute['status']}`,
      created: 0,
      data: { object: { object: 'dispute', currency: 'eur', reason: 'fraudulent', evidence: null, created: 0, updated_ms: 0, ...dispute } },
    });
    const response = await fetch(`${stack.api.url}/webhooks/${own.merchantId}/${own.connectorAccountId}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'sandbox-signature': sandboxSignature(body, secret) },
    });
    return { status: response.status, body: (await response.json()) as { outcome?: string; error?: { code: string; message: string } } };
  };

  async function ownPayment() {
    const created = dataOf(await own.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'EUR' } })).createPayment;
    return dataOf(await own.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } })).confirmPayment;
  }

  it('opens one dispute however many times (and however concurrently) it is reported', async () => {
    const payment = await ownPayment();
    const dispute = {
      id: `sbx_dp_${randomBytes(8).toString('hex')}`,
      payment: payment.activeAttempt.connectorTransactionId,
      amount: 900,
      status: 'needs_response',
      evidence_due_by: Math.floor(Date.now() / 1000) + 86_400,
    };
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(dispute)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const disputes = dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes;
    expect(disputes).toHaveLength(1);
    expect(disputes[0]).toMatchObject({ status: 'OPENED', version: 0 });
  });

  it('never moves a decided dispute back, and opens then moves one whose first report is already decided', async () => {
    const payment = await ownPayment();
    const dispute = {
      id: `sbx_dp_${randomBytes(8).toString('hex')}`,
      payment: payment.activeAttempt.connectorTransactionId,
      amount: 900,
      evidence_due_by: null,
    };
    expect((await send({ ...dispute, status: 'expired' })).body.outcome).toBe('applied');
    const [stored] = dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes;
    expect(stored).toMatchObject({ status: 'EXPIRED', version: 1 });
    expect((await send({ ...dispute, status: 'needs_response' })).body.outcome).toBe('duplicate_or_stale');
    expect((await send({ ...dispute, status: 'won' })).body.outcome).toBe('duplicate_or_stale');
    expect(await (async () => dataOf(await own.secret(DisputeDocument, { id: stored!.id })).dispute?.status)()).toBe('EXPIRED');
  });

  it('takes a decision reported before its challenge through CHALLENGED, sending both events', async () => {
    const payment = await ownPayment();
    const dispute = {
      id: `sbx_dp_${randomBytes(8).toString('hex')}`,
      payment: payment.activeAttempt.connectorTransactionId,
      amount: 900,
      evidence_due_by: null,
    };
    await send({ ...dispute, status: 'needs_response' });
    expect((await send({ ...dispute, status: 'lost' })).body.outcome).toBe('applied');
    const [stored] = dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes;
    expect(stored).toMatchObject({ status: 'LOST', version: 1 });
    const types = (await eventsOf(own, stored!.id)).map((event) => event.eventType).sort();
    expect(types).toEqual(['DISPUTE_CHALLENGED', 'DISPUTE_LOST', 'DISPUTE_OPENED']);
  });

  it('refuses a challenge after the deadline without asking the processor', async () => {
    const payment = await ownPayment();
    const dispute = {
      id: `sbx_dp_${randomBytes(8).toString('hex')}`,
      payment: payment.activeAttempt.connectorTransactionId,
      amount: 900,
      status: 'needs_response',
      evidence_due_by: Math.floor(Date.now() / 1000) - 60,
    };
    await send(dispute);
    const [stored] = dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes;
    const error = errorOf(await own.secret(ChallengeDisputeDocument, { input: { disputeId: stored!.id, evidence: { receipt: 'r' } } }), 'INVALID_STATE');
    expect(error.message).toMatch(/evidence was due by/);
  });

  /** A first report of a new dispute of `payment` (900 EUR, needs_response), with `overrides`. */
  const report = (payment: { activeAttempt: { connectorTransactionId?: string | null } }, overrides: Record<string, unknown> = {}) => ({
    id: `sbx_dp_${randomBytes(8).toString('hex')}`,
    payment: payment.activeAttempt.connectorTransactionId,
    amount: 900,
    status: 'needs_response',
    evidence_due_by: null,
    ...overrides,
  });
  const refused = { status: 200, body: { received: true, outcome: 'refused' } };

  it('refuses a first report in another currency than its payment’s, or of more than it captured: nothing opened, no event', async () => {
    const payment = await ownPayment();
    const disputeEvents = async () =>
      (await sql.query("SELECT count(*)::int AS n FROM events WHERE merchant_id = $1 AND event_type ILIKE 'dispute%'", [own.merchantId])).rows[0].n as number;
    const paymentVersion = async () => (await sql.query('SELECT version FROM payment_intents WHERE id = $1', [payment.id])).rows[0].version as number;
    const [eventsBefore, versionBefore] = [await disputeEvents(), await paymentVersion()];
    expect(await send(report(payment, { currency: 'usd' }))).toEqual(refused);
    expect(await send(report(payment, { amount: 901 }))).toEqual(refused);
    expect(await send(report(payment, { amount: 901, status: 'lost' }))).toEqual(refused);
    expect(dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes).toEqual([]);
    expect([await disputeEvents(), await paymentVersion()]).toEqual([eventsBefore, versionBefore]);
    const stored = await sql.query('SELECT verification, outcome FROM connector_callbacks WHERE payment_id = $1 ORDER BY received_at', [payment.id]);
    expect(stored.rows.map((row) => `${row.verification} ${row.outcome}`)).toEqual([
      'VERIFIED dispute_currency_mismatch',
      'VERIFIED dispute_amount_over_captured',
      'VERIFIED dispute_amount_over_captured',
    ]);
    // The whole captured amount, in its currency, is disputable.
    expect((await send(report(payment))).body.outcome).toBe('applied');
  });

  it('has the processor send again a dispute of a capture not recorded yet, opens it once the capture is, and then refuses a refund', async () => {
    const payment = await ownPayment();
    const setCapture = async (intentStatus: string, attemptStatus: string, captured: number) => {
      await sql.query('UPDATE payment_intents SET status = $2, amount_received = $3, version = version + 1 WHERE id = $1', [
        payment.id,
        intentStatus,
        captured,
      ]);
      await sql.query('UPDATE payment_attempts SET status = $2, amount_captured = $3 WHERE payment_id = $1', [payment.id, attemptStatus, captured]);
    };
    // Our record lags the processor's: the capture is still PROCESSING here (its sync ran out), nothing received.
    await setCapture('PROCESSING', 'CAPTURE_INITIATED', 0);
    const dispute = report(payment);
    expect(await send(dispute)).toEqual({
      status: 503,
      body: {
        error: {
          code: 'SERVICE_UNAVAILABLE',
          message: 'The disputed payment has not recorded its capture yet; send the callback again.',
          requestId: expect.any(String),
          docs: 'docs/api.md#error-service-unavailable',
        },
      },
    });
    expect(dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes).toEqual([]);
    // What no capture can make right is refused for good meanwhile: more than the payment's 900, another currency.
    expect(await send(report(payment, { amount: 901 }))).toEqual(refused);
    expect(await send(report(payment, { currency: 'usd' }))).toEqual(refused);
    // The payment records its capture (as a sync would), and the processor's retry opens the dispute.
    await setCapture('SUCCEEDED', 'CHARGED', 900);
    expect(await send(dispute)).toEqual({ status: 200, body: { received: true, outcome: 'applied' } });
    expect(dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes).toMatchObject([{ status: 'OPENED', amount: 900 }]);
    errorOf(await own.secret(CreateRefundDocument, { input: { paymentId: payment.id } }), 'INVALID_STATE');
    const stored = await sql.query('SELECT verification, outcome FROM connector_callbacks WHERE payment_id = $1 ORDER BY received_at', [payment.id]);
    expect(stored.rows.map((row) => `${row.verification} ${row.outcome}`)).toEqual([
      'VERIFIED dispute_awaiting_capture',
      'VERIFIED dispute_amount_over_captured',
      'VERIFIED dispute_currency_mismatch',
      'VERIFIED applied',
    ]);
  });

  it('opens a dispute of the whole captured amount after a partial refund: the cardholder may dispute before the refund reaches them', async () => {
    const payment = await ownPayment();
    expect(dataOf(await own.secret(CreateRefundDocument, { input: { paymentId: payment.id, amount: 400 } })).createRefund.status).toBe('SUCCEEDED');
    expect((await send(report(payment))).body.outcome).toBe('applied');
    expect(dataOf(await own.secret(DisputesDocument, { paymentId: payment.id })).disputes).toMatchObject([{ status: 'OPENED', amount: 900, currency: 'EUR' }]);
  });

  it('acknowledges a dispute of a payment the account does not have', async () => {
    expect(await send({ id: 'sbx_dp_unknown', payment: 'sbx_pay_unknown', amount: 1, status: 'needs_response', evidence_due_by: null })).toEqual({
      status: 200,
      body: { received: true, outcome: 'dispute_not_found' },
    });
  });
});
