// Refunds over real HTTP, as the service's connector uses them: full and partial refunds up to what the payment
// captured (also under concurrent requests), the refund test cards (pending then settled, or held for review)
// observed by GET and by signed `refund.*` callbacks, idempotency, lookups by reference, and every refusal.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadSandboxConfig } from '../../sandbox/src/config.ts';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import { startSandbox, startSandboxFromConfig } from '../../sandbox/src/server.ts';
import {
  EXPECTED_CARDS,
  METHOD_DETAILS,
  atFrozenTime,
  expectRefused,
  newFauxpayKey,
  newKey,
  paymentInput,
  sleep,
  useCallbackReceivers,
  useSandbox,
  type Body,
  type Callback,
} from './harness.ts';

/** Short, so a pending refund settles within the test; the frozen-clock tests move Date instead of waiting. */
const SETTLE_MS = 50;
const { call, create, createWith, capture, browser, challenged, paid } = useSandbox({ refundSettleMs: SETTLE_MS });

/** Long enough for a callback that would be sent to have arrived, and for a 50 ms settlement to have happened. */
const QUIET_MS = 200;
const { registered, onlyCallback, deliveries } = useCallbackReceivers(call, 'whsec_sandbox_refunds_0123456789', QUIET_MS);
const AMOUNT = 1234;

// Written from the contract, not derived from TEST_CARDS, so a wrong row in the table fails here.
const REFUND_FAILED = { code: 'refund_failed', message: 'The bank could not return the funds.' };
const REFUND_REJECTED = { code: 'refund_rejected', message: 'The refund was rejected after review.' };
const EXPECTED_REFUNDS: Record<string, { answered: string; settles: { status: string; error: Body['error'] } | null }> = {
  '4000000000007726': { answered: 'pending', settles: { status: 'succeeded', error: null } },
  '4000000000005126': { answered: 'pending', settles: { status: 'failed', error: REFUND_FAILED } },
  '4000000000006975': { answered: 'requires_review', settles: null },
};
const REFUND_KEYS = ['id', 'object', 'payment', 'amount', 'currency', 'status', 'reason', 'reference', 'error', 'created', 'updated_ms'];

afterEach(() => {
  vi.useRealTimers();
});

const refund = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}, prefix = '/v1') =>
  call('POST', `${prefix}/refunds`, { key, body, headers });
const getRefund = (key: string, id: string, prefix = '/v1') => call('GET', `${prefix}/refunds/${id}`, { key });
const byReference = (key: string, reference: string) => call('GET', `/v1/refunds?reference=${encodeURIComponent(reference)}`, { key });
const review = (key: string, id: string, decision: string, headers: Record<string, string> = {}) =>
  call('POST', `/v1/test_helpers/refunds/${id}/${decision}`, { key, body: {}, headers });

const notYetRefunded = (amount: number) => `amount must be at most ${amount} (the amount not yet refunded).`;

describe('refunding a payment', () => {
  it('refunds all that was captured by default, answering the refund object that GET answers too', async () => {
    const key = newKey();
    const payment = await paid(key);
    const answer = await refund(key, { payment: payment.id });
    expect(answer.status).toBe(200);
    expect(Object.keys(JSON.parse(answer.text))).toEqual(REFUND_KEYS);
    expect(answer.body).toMatchObject({
      object: 'refund',
      payment: payment.id,
      amount: AMOUNT,
      currency: 'usd',
      status: 'succeeded',
      reason: null,
      reference: null,
      error: null,
    });
    expect(answer.body.id).toMatch(/^sbx_re_[A-Za-z0-9]{24}$/);
    expect(Math.abs(answer.body.created - Date.now() / 1000)).toBeLessThan(5);
    expect(answer.body.updated_ms).toBeGreaterThanOrEqual(answer.body.created * 1000);
    const fetched = await getRefund(key, answer.body.id);
    expect(fetched.status).toBe(200);
    expect(fetched.text).toBe(answer.text);
  });

  it('keeps the reason and reference, and accepts 500 and 100 characters of them', async () => {
    const key = newKey();
    const payment = await paid(key);
    const [reason, reference] = ['r'.repeat(500), 'f'.repeat(100)];
    const answer = await refund(key, { payment: payment.id, amount: 1, reason, reference });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ reason, reference, amount: 1 });
  });

  it('refunds in parts up to amount_captured, then refuses more, naming what is left', async () => {
    const key = newKey();
    const payment = await paid(key);
    expect((await refund(key, { payment: payment.id, amount: 500 })).body).toMatchObject({ amount: 500, status: 'succeeded' });
    expectRefused(await refund(key, { payment: payment.id, amount: 735 }), 400, 'invalid_request', notYetRefunded(734));
    expect((await refund(key, { payment: payment.id, amount: 400 })).body.amount).toBe(400);
    // Without an amount: all that is left.
    expect((await refund(key, { payment: payment.id })).body.amount).toBe(334);
    for (const body of [{ payment: payment.id, amount: 1 }, { payment: payment.id }]) {
      expectRefused(await refund(key, body), 400, 'invalid_request', `${notYetRefunded(0)} The payment is fully refunded.`);
    }
    // The payment itself stays succeeded with what it captured.
    expect((await call('GET', `/v1/payments/${payment.id}`, { key })).body).toMatchObject({ status: 'succeeded', amount_captured: AMOUNT });
  });

  it('refunds at most what a partial capture took', async () => {
    const key = newKey();
    const held = await create(key, { capture_method: 'manual' });
    expect((await capture(key, held.body.id, { amount_to_capture: 600 })).body.amount_captured).toBe(600);
    expectRefused(await refund(key, { payment: held.body.id, amount: 601 }), 400, 'invalid_request', notYetRefunded(600));
    expect((await refund(key, { payment: held.body.id })).body.amount).toBe(600);
  });

  it('counts pending and in-review refunds as refunded, and gives back the amount of one that failed', async () => {
    const key = newKey();
    const failing = await paid(key, '4000000000005126');
    const pending = await refund(key, { payment: failing.id, amount: 1000 }, { 'x-sandbox-settle-ms': '500' });
    expect(pending.body.status).toBe('pending');
    expectRefused(await refund(key, { payment: failing.id, amount: 300 }), 400, 'invalid_request', notYetRefunded(234));
    await vi.waitFor(async () => expect((await getRefund(key, pending.body.id)).body.status).toBe('failed'), { timeout: 3000, interval: 20 });
    expect((await refund(key, { payment: failing.id })).body).toMatchObject({ amount: AMOUNT, status: 'pending' });

    const reviewed = await paid(key, '4000000000006975');
    const held = await refund(key, { payment: reviewed.id });
    expect(held.body).toMatchObject({ status: 'requires_review', amount: AMOUNT });
    expectRefused(await refund(key, { payment: reviewed.id, amount: 1 }), 400, 'invalid_request', /^amount must be at most 0 /);
    expect((await review(key, held.body.id, 'reject')).body.status).toBe('failed');
    expect((await refund(key, { payment: reviewed.id, amount: AMOUNT })).body.status).toBe('requires_review');
  });

  it('never refunds more than was captured under 20 concurrent partial refunds', async () => {
    const key = newKey();
    const payment = await paid(key, '4242424242424242', { amount: 1000 });
    // 1000 / 73: 13 refunds fit (949), the other 7 must be refused with the 51 left.
    const answers = await Promise.all(Array.from({ length: 20 }, () => refund(key, { payment: payment.id, amount: 73 })));
    const accepted = answers.filter((answer) => answer.status === 200);
    expect(accepted).toHaveLength(13);
    expect(new Set(accepted.map((answer) => answer.body.id)).size).toBe(13);
    for (const refused of answers.filter((answer) => answer.status !== 200)) expectRefused(refused, 400, 'invalid_request', notYetRefunded(51));
    expect((await refund(key, { payment: payment.id })).body.amount).toBe(51);
    expectRefused(await refund(key, { payment: payment.id, amount: 1 }), 400, 'invalid_request', /^amount must be at most 0 /);
  });

  it('holds the line for concurrent refunds of a payment whose refunds stay pending', async () => {
    const key = newKey();
    const payment = await paid(key, '4000000000007726', { amount: 1000 });
    const amounts = Array.from({ length: 20 }, (_, index) => 50 + index * 10);
    const answers = await Promise.all(amounts.map((amount) => refund(key, { payment: payment.id, amount }, { 'x-sandbox-settle-ms': '600000' })));
    const total = answers.filter((answer) => answer.status === 200).reduce((sum, answer) => sum + answer.body.amount, 0);
    expect(total).toBeLessThanOrEqual(1000);
    for (const answer of answers.filter((candidate) => candidate.status !== 200)) {
      expect(answer.status).toBe(400);
      expect(answer.body.error?.message).toMatch(/^amount must be at most \d+ \(the amount not yet refunded\)\./);
    }
    const beyond = await refund(key, { payment: payment.id, amount: 1000 - total + 1 });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error?.message.startsWith(notYetRefunded(1000 - total))).toBe(true);
  });
});

describe('what a refund refuses', () => {
  it.each<[string, (key: string) => Promise<Body>, string]>([
    ['requires_capture', async (key) => (await create(key, { capture_method: 'manual' })).body, 'requires_capture'],
    ['failed', async (key) => (await create(key, {}, { number: '4000000000000002' })).body, 'failed'],
    ['requires_device_data', (key) => challenged(key), 'requires_device_data'],
    [
      'processing (a bank debit)',
      async (key) => (await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '600000' })).body,
      'processing',
    ],
    [
      'canceled',
      async (key) => (await call('POST', `/v1/payments/${(await create(key, { capture_method: 'manual' })).body.id}/cancel`, { key, body: {} })).body,
      'canceled',
    ],
  ])('refuses to refund a payment that is %s with 409 invalid_state', async (_label, payment, status) => {
    const key = newKey();
    const { id } = await payment(key);
    expectRefused(await refund(key, { payment: id }), 409, 'invalid_state', `This payment cannot be refunded: its status is ${status}.`);
  });

  it("answers 404 resource_missing for another key's payment and refund, and for unknown ones", async () => {
    const owner = newKey();
    const payment = await paid(owner);
    const created = await refund(owner, { payment: payment.id, amount: 100, reference: 'ref_owner' });
    const other = newKey();
    expectRefused(await refund(other, { payment: payment.id }), 404, 'resource_missing', `No payment ${payment.id}.`);
    expectRefused(await refund(owner, { payment: 'sbx_pay_000000000000000000000000' }), 404, 'resource_missing', /^No payment /);
    expectRefused(await getRefund(other, created.body.id), 404, 'resource_missing', `No refund ${created.body.id}.`);
    expectRefused(await getRefund(owner, 'sbx_re_000000000000000000000000'), 404, 'resource_missing', /^No refund /);
    expectRefused(await byReference(other, 'ref_owner'), 404, 'resource_missing', 'No refund with reference ref_owner.');
    expectRefused(await review(other, created.body.id, 'approve'), 404, 'resource_missing', `No refund ${created.body.id}.`);
    // fauxpay has memory of its own: the sandbox personality's refund is not one of its refunds.
    expectRefused(await getRefund(newFauxpayKey(), created.body.id, '/fauxpay/v1'), 404, 'resource_missing', /^No refund /);
    // Nothing was refunded by the refusals.
    expect((await refund(owner, { payment: payment.id })).body.amount).toBe(AMOUNT - 100);
  });

  it.each<[string, Record<string, unknown>]>([
    ['payment', { payment: undefined }],
    ['payment', { payment: 42 }],
    ['amount', { amount: 0 }],
    ['amount', { amount: 1.5 }],
    ['amount', { amount: '100' }],
    ['reason', { reason: 'r'.repeat(501) }],
    ['reason', { reason: 7 }],
    ['reference', { reference: 'f'.repeat(101) }],
    ['currency', { currency: 'usd' }],
  ])('refuses a bad %s with 400 invalid_request naming it', async (field, fields) => {
    const key = newKey();
    const payment = await paid(key);
    const answer = await refund(key, { payment: payment.id, ...fields });
    expectRefused(answer, 400, 'invalid_request', new RegExp(`^${field} `));
    expect((await refund(key, { payment: payment.id })).body.amount).toBe(AMOUNT);
  });

  it('needs a secret key of the personality', async () => {
    expectRefused(await call('POST', '/v1/refunds', { key: null, body: {} }), 401, 'invalid_api_key', /^Send Authorization/);
    expectRefused(await call('GET', '/fauxpay/v1/refunds/sbx_re_x', { key: newKey() }), 401, 'invalid_api_key', /^Send Authorization/);
  });
});

describe('idempotency', () => {
  it('answers a repeated refund with the same refund and refunds once; another request with the key is refused', async () => {
    const key = newKey();
    const payment = await paid(key);
    const headers = { 'idempotency-key': 'rfd_1' };
    const first = await refund(key, { payment: payment.id, amount: 1000, reason: 'requested_by_customer' }, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const replay = await refund(key, { reason: 'requested_by_customer', amount: 1000, payment: payment.id }, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectRefused(await refund(key, { payment: payment.id, amount: 999 }, headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    // The key on another route is another request.
    expectRefused(await review(key, first.body.id, 'approve', headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    // Only one refund was made: 234 is left.
    expectRefused(await refund(key, { payment: payment.id, amount: 235 }), 400, 'invalid_request', notYetRefunded(234));
  });

  it('does not record a refused refund, so its key may be used again', async () => {
    const key = newKey();
    const payment = await paid(key);
    const headers = { 'idempotency-key': 'rfd_refused' };
    expect((await refund(key, { payment: payment.id, amount: AMOUNT + 1 }, headers)).status).toBe(400);
    expect((await refund(key, { payment: payment.id, amount: AMOUNT }, headers)).status).toBe(200);
  });

  it('replays a pending refund as it is now, settling it if it is due', async () => {
    const key = newKey();
    const payment = await paid(key, '4000000000007726');
    const headers = { 'idempotency-key': 'rfd_settling', 'x-sandbox-settle-ms': '0' };
    const first = await refund(key, { payment: payment.id }, headers);
    expect(first.body.status).toBe('pending');
    const replay = await refund(key, { payment: payment.id }, headers);
    expect(replay.body).toMatchObject({ id: first.body.id, status: 'succeeded' });
    expect(replay.body.updated_ms).toBeGreaterThan(first.body.updated_ms);
  });
});

describe('GET by reference', () => {
  it("answers the latest refund of the key with that reference, as the service's recovery after a timeout needs", async () => {
    const key = newKey();
    const payment = await paid(key);
    const first = await refund(key, { payment: payment.id, amount: 100, reference: 'ref_timeout' });
    expect((await byReference(key, 'ref_timeout')).text).toBe(first.text);
    const second = await refund(key, { payment: payment.id, amount: 200, reference: 'ref_timeout' });
    expect((await byReference(key, 'ref_timeout')).body).toMatchObject({ id: second.body.id, amount: 200 });
    expectRefused(await byReference(key, 'ref_never'), 404, 'resource_missing', 'No refund with reference ref_never.');
    expectRefused(await call('GET', '/v1/refunds', { key }), 400, 'invalid_request', /^reference /);
  });
});

describe('refund test cards', () => {
  it('the expectations cover exactly the rows of the card table with a refund behaviour', () => {
    expect(
      TEST_CARDS.filter((card) => card.refund !== undefined)
        .map((card) => card.number)
        .sort(),
    ).toEqual(Object.keys(EXPECTED_REFUNDS).sort());
  });

  const approvedWithoutRefundRow = TEST_CARDS.filter((card) => card.refund === undefined && EXPECTED_CARDS[card.number]?.status === 'succeeded');
  it.each(approvedWithoutRefundRow.map((card) => card.number))('card %s: a refund succeeds at once, with no callback', async (number) => {
    const { key, receiver } = await registered();
    const payment = await paid(key, number);
    expect((await refund(key, { payment: payment.id })).body).toMatchObject({ status: 'succeeded', amount: AMOUNT, error: null });
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
  });

  const settling = Object.entries(EXPECTED_REFUNDS).flatMap(([number, { answered, settles }]) => (settles === null ? [] : [{ number, answered, settles }]));
  it.each(settling)(
    'card $number: a refund is $answered, then $settles.status after the settle delay, by timer and callback',
    async ({ number, answered, settles }) => {
      const { key, receiver } = await registered();
      const payment = await paid(key, number);
      const created = await refund(key, { payment: payment.id, amount: 1000, reference: `ref_${number.slice(-4)}` });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ status: answered, amount: 1000, error: null });
      // No read at all: the timer settles it and the callback tells.
      const event = await onlyCallback(key, receiver, `refund.${settles.status}`);
      expect(event.data.object).toMatchObject({
        id: created.body.id,
        payment: payment.id,
        status: settles.status,
        error: settles.error,
        reference: `ref_${number.slice(-4)}`,
      });
      expect(event.data.object.updated_ms).toBeGreaterThanOrEqual(created.body.created * 1000 + SETTLE_MS);
      expect(event.data.object.updated_ms).toBeGreaterThan(created.body.updated_ms);
      const [delivery] = await deliveries(key);
      expect(delivery).toMatchObject({
        event_id: event.id,
        type: `refund.${settles.status}`,
        object_id: created.body.id,
        payment_id: payment.id,
        delivered: true,
      });
    },
  );

  it.each(settling)('card $number: a read after the delay settles the refund before its timer, once', async ({ number, settles }) => {
    const { key, receiver } = await registered();
    const payment = await paid(key, number);
    const started = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(started);
    const created = await refund(key, { payment: payment.id, reference: `ref_read_${number.slice(-4)}` }, { 'x-sandbox-settle-ms': '60000' });
    vi.setSystemTime(started + 59_999);
    expect((await getRefund(key, created.body.id)).body.status).toBe('pending');
    vi.setSystemTime(started + 60_000);
    expect((await byReference(key, `ref_read_${number.slice(-4)}`)).body).toMatchObject({ status: settles.status, error: settles.error });
    vi.useRealTimers();
    await receiver.waitForRequests(1, 3000);
    await sleep(QUIET_MS);
    expect(receiver.bodies().map((body) => (body as unknown as Callback).type)).toEqual([`refund.${settles.status}`]);
  });

  const reviewed = Object.keys(EXPECTED_REFUNDS).filter((number) => EXPECTED_REFUNDS[number]!.settles === null);
  it.each(
    reviewed.flatMap(
      (number) =>
        [
          [number, 'approve', 'succeeded', null],
          [number, 'reject', 'failed', REFUND_REJECTED],
        ] as const,
    ),
  )('card %s: a refund waits in requires_review until the test helper says %s, then is %s, with a callback', async (number, decision, status, error) => {
    const { key, receiver } = await registered();
    const payment = await paid(key, number);
    const created = await refund(key, { payment: payment.id });
    expect(created.body).toMatchObject({ status: EXPECTED_REFUNDS[number]!.answered, error: null });
    // Well past the settle delay: review has no deadline.
    await sleep(QUIET_MS);
    expect((await getRefund(key, created.body.id)).body.status).toBe('requires_review');
    expect(receiver.received).toEqual([]);
    const decided = await review(key, created.body.id, decision, { 'idempotency-key': `review_${decision}` });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ id: created.body.id, status, error });
    expect(decided.body.updated_ms).toBeGreaterThan(created.body.updated_ms);
    // The helper's replay answers the same, and makes no second change.
    const replay = await review(key, created.body.id, decision, { 'idempotency-key': `review_${decision}` });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(decided.text);
    const event = await onlyCallback(key, receiver, `refund.${status}`);
    expect(event.data.object).toMatchObject({ id: created.body.id, status, error });
    // Decided once: neither helper works again.
    for (const [again, done] of [
      ['approve', 'approved'],
      ['reject', 'rejected'],
    ]) {
      expectRefused(await review(key, created.body.id, again!), 409, 'invalid_state', `This refund cannot be ${done}: its status is ${status}.`);
    }
  });

  it('refuses the review helpers for a refund that is not in review, and answers 404 for another helper', async () => {
    const key = newKey();
    const atOnce = await refund(key, { payment: (await paid(key)).id });
    const pending = await refund(key, { payment: (await paid(key, '4000000000007726')).id }, { 'x-sandbox-settle-ms': '600000' });
    expectRefused(await review(key, atOnce.body.id, 'approve'), 409, 'invalid_state', 'This refund cannot be approved: its status is succeeded.');
    expectRefused(await review(key, pending.body.id, 'reject'), 409, 'invalid_state', 'This refund cannot be rejected: its status is pending.');
    expectRefused(await review(key, pending.body.id, 'cancel'), 404, 'not_found', /^There is no route POST /);
    expectRefused(await call('GET', `/v1/test_helpers/refunds/${pending.body.id}/approve`, { key }), 404, 'not_found', /^There is no route GET /);
  });
});

describe('other payment methods', () => {
  /** A succeeded payment of each group that is not a card, brought there as its customer would. */
  const SUCCEEDED_BY_METHOD: Record<string, (key: string) => Promise<Body>> = {
    bank_debit: async (key) => {
      const created = await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '0' });
      return (await call('GET', `/v1/payments/${created.body.id}`, { key })).body;
    },
    bank_redirect: async (key) => {
      const created = await createWith(key, METHOD_DETAILS.bank_redirect);
      await browser('POST', `/bank/${created.body.id}/authorize`);
      return (await call('GET', `/v1/payments/${created.body.id}`, { key })).body;
    },
    bank_transfer: async (key) => {
      const created = await createWith(key, METHOD_DETAILS.bank_transfer);
      return (await call('POST', `/v1/test_helpers/payments/${created.body.id}/fund`, { key, body: {} })).body;
    },
    crypto: async (key) => {
      const created = await createWith(key, METHOD_DETAILS.crypto);
      return (await call('POST', `/v1/test_helpers/payments/${created.body.id}/fund`, { key, body: {} })).body;
    },
    wallet: async (key) => {
      const session = await call('POST', '/v1/sessions', { key, body: { wallet: 'sandbox_pay', amount: AMOUNT, currency: 'USD' } });
      const { payment_token } = (await browser('POST', `/sessions/${session.body.session_token}/approve`)).body;
      return (await createWith(key, { payment_method_type: 'wallet', wallet: { type: 'sandbox_pay', payment_token } })).body;
    },
    pay_later: async (key) => {
      const session = await call('POST', '/v1/sessions', { key, body: { wallet: 'sandbox_later', amount: AMOUNT, currency: 'USD' } });
      const { payment_token } = (await browser('POST', `/sessions/${session.body.session_token}/approve`)).body;
      return (await createWith(key, { payment_method_type: 'pay_later', pay_later: { type: 'sandbox_later', payment_token } })).body;
    },
  };

  it.each(Object.keys(SUCCEEDED_BY_METHOD))('a %s payment is refunded at once', async (method) => {
    const key = newKey();
    const payment = await SUCCEEDED_BY_METHOD[method]!(key);
    expect(payment).toMatchObject({ status: 'succeeded', payment_method_type: method });
    expect((await refund(key, { payment: payment.id, amount: 34 })).body).toMatchObject({ status: 'succeeded', amount: 34, currency: 'usd' });
  });

  it('refunds on fauxpay under its own prefix, with its own keys and memory', async () => {
    const key = newFauxpayKey();
    const created = await call('POST', '/fauxpay/v1/payments', { key, body: paymentInput({ amount: 500, currency: 'EUR' }, { number: '4000000000006975' }) });
    expect(created.body.status).toBe('succeeded');
    const held = await refund(key, { payment: created.body.id, reference: 'ref_faux' }, {}, '/fauxpay/v1');
    expect(held.body).toMatchObject({ status: 'requires_review', currency: 'eur', amount: 500 });
    expect((await call('GET', '/fauxpay/v1/refunds?reference=ref_faux', { key })).body.id).toBe(held.body.id);
    const approved = await call('POST', `/fauxpay/v1/test_helpers/refunds/${held.body.id}/approve`, { key, body: {} });
    expect(approved.body.status).toBe('succeeded');
    expect((await getRefund(key, held.body.id, '/fauxpay/v1')).body.status).toBe('succeeded');
    // The sandbox personality does not know fauxpay's payment.
    expectRefused(await refund(newKey(), { payment: created.body.id }), 404, 'resource_missing', /^No payment /);
  });
});

describe('the refund settle delay', () => {
  it('is 3 s by default, refundSettleMs as set, SANDBOX_REFUND_SETTLE_MS from the environment, and the header over all', async () => {
    const byDefault = await startSandbox({ port: 0 });
    const byOption = await startSandbox({ port: 0, refundSettleMs: 10_000 });
    const byConfig = await startSandboxFromConfig(loadSandboxConfig({ SANDBOX_PORT: '0', SANDBOX_REFUND_SETTLE_MS: '20000' }));
    try {
      await atFrozenTime(async (at) => {
        const key = newKey();
        const pendingRefund = async (base: string, headers: Record<string, string> = {}) => {
          const payment = await call('POST', '/v1/payments', { key, base, body: paymentInput({}, { number: '4000000000007726' }) });
          const created = await call('POST', '/v1/refunds', { key, base, body: { payment: payment.body.id }, headers });
          expect(created.body.status).toBe('pending');
          return async () => (await call('GET', `/v1/refunds/${created.body.id}`, { key, base })).body.status;
        };
        const status = {
          byDefault: await pendingRefund(byDefault.url),
          byOption: await pendingRefund(byOption.url),
          byConfig: await pendingRefund(byConfig.url),
          byHeader: await pendingRefund(byOption.url, { 'x-sandbox-settle-ms': '500' }),
        };
        const statuses = async () => Object.fromEntries(await Promise.all(Object.entries(status).map(async ([name, read]) => [name, await read()])));
        at(499);
        expect(await statuses()).toEqual({ byDefault: 'pending', byOption: 'pending', byConfig: 'pending', byHeader: 'pending' });
        at(500);
        expect((await statuses()).byHeader).toBe('succeeded');
        at(2999);
        expect((await statuses()).byDefault).toBe('pending');
        at(3000);
        expect(await statuses()).toEqual({ byDefault: 'succeeded', byOption: 'pending', byConfig: 'pending', byHeader: 'succeeded' });
        at(9999);
        expect((await statuses()).byOption).toBe('pending');
        at(10_000);
        expect((await statuses()).byOption).toBe('succeeded');
        at(19_999);
        expect((await statuses()).byConfig).toBe('pending');
        at(20_000);
        expect((await statuses()).byConfig).toBe('succeeded');
      });
    } finally {
      vi.useRealTimers();
      await Promise.all([byDefault.close(), byOption.close(), byConfig.close()]);
    }
  });

  it.each(['600001', '-1', 'soon'])('refuses x-sandbox-settle-ms: %s on a refund with 400 naming the header', async (value) => {
    const key = newKey();
    const payment = await paid(key, '4000000000007726');
    const answer = await refund(key, { payment: payment.id }, { 'x-sandbox-settle-ms': value });
    expectRefused(answer, 400, 'invalid_request', 'x-sandbox-settle-ms must be an integer from 0 to 600000.');
  });

  it('SANDBOX_REFUND_SETTLE_MS is 3000 unless set, and a bad value is refused naming the variable', () => {
    expect(loadSandboxConfig({}).SANDBOX_REFUND_SETTLE_MS).toBe(3000);
    expect(loadSandboxConfig({ SANDBOX_REFUND_SETTLE_MS: '0' }).SANDBOX_REFUND_SETTLE_MS).toBe(0);
    for (const value of ['soon', '-1', '1.5', '600001']) {
      expect(() => loadSandboxConfig({ SANDBOX_REFUND_SETTLE_MS: value })).toThrow('SANDBOX_REFUND_SETTLE_MS: must be an integer from 0 to 600000');
    }
  });
});
