// Partial authorization (`partial_authorization: "allowed"` and the partial funds test card) and the void of a
// succeeded card payment (cancel after capture), over real HTTP on both processors.
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import { PAYMENT_METHOD_TYPES } from '../../sandbox/src/processors.ts';
import {
  EXPECTED_CARDS,
  FUTURE_YEAR,
  METHOD_DETAILS,
  SAVE,
  cvcFor,
  expectRefused,
  newFauxpayKey,
  newKey,
  paymentInput,
  sleep,
  useCallbackReceivers,
  useSandbox,
  type Answer,
  type Body,
} from './harness.ts';

const DISPUTE_OPEN_MS = 300;
const QUIET_MS = 200;
const { call, create, createWith, get, capture, cancel, browser, paid, chargeOffSession } = useSandbox({ disputeOpenMs: DISPUTE_OPEN_MS });
const { registered } = useCallbackReceivers(call, 'whsec_sandbox_partial_void_0123456789', QUIET_MS);

const ALLOWED = { partial_authorization: 'allowed' };
/** paymentInput's amount. */
const AMOUNT = 1234;

// Written from the contract, not derived from TEST_CARDS, so a wrong row in the table fails here: what each
// partial funds card's funds cover of an amount.
const EXPECTED_PARTIAL: Record<string, (amount: number) => number> = {
  '4000000000001976': (amount) => Math.floor(amount / 2),
};
const INSUFFICIENT_FUNDS = { code: 'insufficient_funds', message: 'Your card has insufficient funds.', retryable: false };

/** Both processors: each serves cards, so each authorises partially and voids. */
const PREFIXES = [
  { prefix: '/v1', newKeyFor: newKey },
  { prefix: '/fauxpay/v1', newKeyFor: newFauxpayKey },
];

const createAt = (prefix: string, key: string, overrides: Record<string, unknown>, card: Record<string, unknown>) =>
  call('POST', `${prefix}/payments`, { key, body: paymentInput(overrides, card) });

/** What a payment authorised for `authorized` of `amount` shows, by capture method. */
function authorizedFields(captureMethod: string, amount: number, authorized: number) {
  return captureMethod === 'manual'
    ? { status: 'requires_capture', amount, amount_capturable: authorized, amount_captured: 0 }
    : { status: 'succeeded', amount, amount_capturable: 0, amount_captured: authorized };
}

const expectDeclinedForFunds = (answer: Answer, amount: number) => {
  expect(answer.status, answer.text).toBe(402);
  expect(answer.body).toMatchObject({ status: 'failed', amount, amount_capturable: 0, amount_captured: 0, error: INSUFFICIENT_FUNDS });
};

describe('partial authorization', () => {
  it('the expectations cover exactly the rows of the card table with a funds share', () => {
    expect(
      TEST_CARDS.filter((card) => card.funds !== undefined)
        .map((card) => card.number)
        .sort(),
    ).toEqual(Object.keys(EXPECTED_PARTIAL).sort());
  });

  const CASES = Object.keys(EXPECTED_PARTIAL).flatMap((number) =>
    PREFIXES.flatMap(({ prefix, newKeyFor }) =>
      ['automatic', 'manual'].flatMap((captureMethod) => [1234, 1235].map((amount) => ({ number, prefix, newKeyFor, captureMethod, amount }))),
    ),
  );

  it.each(CASES)(
    'card $number at $prefix, $captureMethod, amount $amount: authorised for its share with the field, declined without',
    async ({ number, prefix, newKeyFor, captureMethod, amount }) => {
      const key = newKeyFor();
      const overrides = { capture_method: captureMethod, amount };
      const card = { number, cvc: cvcFor(number) };
      const partial = await createAt(prefix, key, { ...overrides, ...ALLOWED }, card);
      expect(partial.status, partial.text).toBe(200);
      expect(partial.body).toMatchObject({ ...authorizedFields(captureMethod, amount, EXPECTED_PARTIAL[number]!(amount)), error: null, next_action: null });
      expect((await get(key, partial.body.id, prefix)).body).toEqual(partial.body);

      const declined = await createAt(prefix, key, overrides, card);
      expectDeclinedForFunds(declined, amount);
      expect((await get(key, declined.body.id, prefix)).body).toEqual(declined.body);
    },
  );

  it.each(Object.keys(EXPECTED_PARTIAL))('card %s: the partial hold captures as any other, up to amount_capturable', async (number) => {
    const key = newKey();
    const share = EXPECTED_PARTIAL[number]!(AMOUNT);
    const held = (await create(key, { ...ALLOWED, capture_method: 'manual' }, { number })).body;
    expectRefused(
      await capture(key, held.id, { amount_to_capture: share + 1 }),
      400,
      'invalid_request',
      `amount_to_capture must be at most ${share} (the amount capturable).`,
    );
    const captured = await capture(key, held.id);
    expect(captured.status, captured.text).toBe(200);
    expect(captured.body).toMatchObject({ status: 'succeeded', amount: AMOUNT, amount_captured: share, amount_capturable: 0 });

    const part = (await create(key, { ...ALLOWED, capture_method: 'manual', reference: 'att_part' }, { number })).body;
    expect((await capture(key, part.id, { amount_to_capture: share - 100 })).body).toMatchObject({ status: 'succeeded', amount_captured: share - 100 });
    // A refund gives back at most what was captured.
    const refund = await call('POST', '/v1/refunds', { key, body: { payment: held.id } });
    expect(refund.body).toMatchObject({ status: 'succeeded', amount: share });
  });

  it.each(Object.keys(EXPECTED_PARTIAL))('card %s: an amount whose share rounds down to nothing is declined, even with the field', async (number) => {
    expect(EXPECTED_PARTIAL[number]!(1)).toBe(0);
    expectDeclinedForFunds(await create(newKey(), { ...ALLOWED, amount: 1 }, { number }), 1);
  });

  it.each(Object.keys(EXPECTED_PARTIAL).flatMap((number) => ['automatic', 'manual'].map((captureMethod) => ({ number, captureMethod }))))(
    'card $number, $captureMethod: challenged only with three_ds "required", and the completed challenge authorises the share',
    async ({ number, captureMethod }) => {
      const key = newKey();
      const share = EXPECTED_PARTIAL[number]!(AMOUNT);
      const challenged = await create(key, { ...ALLOWED, capture_method: captureMethod, three_ds: 'required' }, { number });
      expect(challenged.body).toMatchObject({ status: 'requires_device_data', amount_capturable: 0, amount_captured: 0 });
      expect((await browser('GET', `/challenge/${challenged.body.id}`)).status).toBe(200);
      expect((await browser('POST', `/challenge/${challenged.body.id}/complete`)).status).toBe(303);
      expect((await get(key, challenged.body.id)).body).toMatchObject(authorizedFields(captureMethod, AMOUNT, share));
      // Without the field it is declined at once, before any challenge, as every decline is.
      expectDeclinedForFunds(await create(key, { capture_method: captureMethod, three_ds: 'required' }, { number }), AMOUNT);
    },
  );

  it.each(Object.keys(EXPECTED_PARTIAL))('card %s: saved with a partial authorization, its token pays as the card does, off session too', async (number) => {
    const key = newKey();
    const saving = await create(key, { ...SAVE, ...ALLOWED }, { number });
    expect(saving.body.status).toBe('succeeded');
    const token = saving.body.payment_method_token!;
    expect(token).toMatch(/^pm_/);
    expect((await chargeOffSession(key, token, ALLOWED)).body).toMatchObject(authorizedFields('automatic', AMOUNT, EXPECTED_PARTIAL[number]!(AMOUNT)));
    expectDeclinedForFunds(await chargeOffSession(key, token), AMOUNT);
  });

  it.each(TEST_CARDS.filter((card) => card.funds === undefined).map((card) => card.number))(
    'card %s ignores the field: answered as without it',
    async (number) => {
      const expected = EXPECTED_CARDS[number]!;
      const created = await create(newKey(), { ...ALLOWED, capture_method: 'manual' }, { number, cvc: cvcFor(number) });
      expect(created.status).toBe(expected.http);
      expect(created.body.error).toEqual(expected.error);
      expect(created.body.card).toEqual({ brand: expected.brand, last4: number.slice(-4), exp_month: 12, exp_year: FUTURE_YEAR });
      const held = expected.status === 'succeeded';
      expect(created.body).toMatchObject({ status: held ? 'requires_capture' : expected.status, amount_capturable: held ? AMOUNT : 0, amount_captured: 0 });
    },
  );

  // Every group but cards, with a detail object it would otherwise take (the wallets' tokens are never looked at).
  const NON_CARD: Record<string, Record<string, unknown>> = {
    ...METHOD_DETAILS,
    wallet: { payment_method_type: 'wallet', wallet: { type: 'sandbox_pay', payment_token: 'wtok_never_issued' } },
    pay_later: { payment_method_type: 'pay_later', pay_later: { type: 'sandbox_later', payment_token: 'wtok_never_issued' } },
  };

  it('the refusals below cover every payment method group but cards', () => {
    expect(Object.keys(NON_CARD).sort()).toEqual(PAYMENT_METHOD_TYPES.filter((type) => type !== 'card').sort());
  });

  it.each(Object.entries(NON_CARD))('refuses the field with %s: 400 naming partial_authorization', async (type, method) => {
    const answer = await createWith(newKey(), method, ALLOWED);
    expectRefused(answer, 400, 'invalid_request', `partial_authorization is not allowed with payment_method_type ${type}.`);
  });

  it.each([['yes'], [true], [null]])('refuses partial_authorization %j with 400 naming it', async (value) => {
    expectRefused(await create(newKey(), { partial_authorization: value }), 400, 'invalid_request', /^partial_authorization /);
  });
});

// ---- Void after capture ---------------------------------------------------------------------------------------

const VOIDED = { status: 'canceled', amount_captured: 0, amount_capturable: 0, canceled_after_capture: true, next_action: null, error: null };
const voidRefusal = (why: string) => `This payment cannot be canceled after capture: ${why}.`;
const refund = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => call('POST', '/v1/refunds', { key, body, headers });
const openDispute = (key: string, id: string) => call('POST', `/v1/test_helpers/payments/${id}/dispute`, { key, body: {} });
const disputesOf = async (key: string, id: string) => (JSON.parse((await call('GET', `/v1/disputes?payment=${id}`, { key })).text) as { data: Body[] }).data;

/** The succeeded card payments that can be voided, each as its key got it. */
const SUCCEEDED: Record<string, (key: string) => Promise<Body>> = {
  automatic: (key) => paid(key),
  'captured in full': async (key) => (await capture(key, (await create(key, { capture_method: 'manual' })).body.id)).body,
  'captured in part': async (key) => (await capture(key, (await create(key, { capture_method: 'manual' })).body.id, { amount_to_capture: 1000 })).body,
  'partially authorised': async (key) => (await create(key, ALLOWED, { number: Object.keys(EXPECTED_PARTIAL)[0]! })).body,
};

/** A succeeded payment of every other group, as its key got it (the wallets' need the sheet: bank ones stand for them). */
const SUCCEEDED_NOT_CARD: Record<string, (key: string) => Promise<Body>> = {
  bank_debit: async (key) => {
    const created = await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '0' });
    return (await get(key, created.body.id)).body;
  },
  bank_redirect: async (key) => {
    const created = await createWith(key, METHOD_DETAILS.bank_redirect);
    await browser('POST', `/bank/${created.body.id}/authorize`);
    return (await get(key, created.body.id)).body;
  },
  bank_transfer: async (key) => {
    const created = await createWith(key, METHOD_DETAILS.bank_transfer);
    return (await call('POST', `/v1/test_helpers/payments/${created.body.id}/fund`, { key, body: {} })).body;
  },
};

describe('void after capture', () => {
  it.each(Object.keys(SUCCEEDED))('voids a succeeded card payment (%s): canceled, nothing captured, canceled_after_capture', async (setup) => {
    const { key, receiver } = await registered();
    const payment = await SUCCEEDED[setup]!(key);
    expect(payment).toMatchObject({ status: 'succeeded', canceled_after_capture: false });
    const voided = await cancel(key, payment.id);
    expect(voided.status, voided.text).toBe(200);
    expect(voided.body).toMatchObject({ ...VOIDED, id: payment.id, amount: payment.amount, capture_method: payment.capture_method });
    expect(voided.body.updated_ms).toBeGreaterThan(payment.updated_ms);
    expect((await get(key, payment.id)).body).toEqual(voided.body);
    // Cancelling again answers the same payment.
    expect((await cancel(key, payment.id)).body).toEqual(voided.body);
    // The caller's own change: no callback.
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
  });

  it.each(PREFIXES)('voids on $prefix too', async ({ prefix, newKeyFor }) => {
    const key = newKeyFor();
    const payment = (await createAt(prefix, key, {}, {})).body;
    const voided = await call('POST', `${prefix}/payments/${payment.id}/cancel`, { key, body: {} });
    expect(voided.body).toMatchObject(VOIDED);
  });

  it('is false on every payment not voided, a payment canceled before capture included', async () => {
    const key = newKey();
    const held = (await create(key, { capture_method: 'manual' })).body;
    expect(held.canceled_after_capture).toBe(false);
    expect((await cancel(key, held.id)).body).toMatchObject({
      status: 'canceled',
      amount: AMOUNT,
      amount_captured: 0,
      amount_capturable: 0,
      canceled_after_capture: false,
    });
    expect((await create(key, {}, { number: '4000000000000002' })).body.canceled_after_capture).toBe(false);
    expect((await createWith(key, METHOD_DETAILS.bank_transfer)).body.canceled_after_capture).toBe(false);
  });

  it('answers a replay of the void (same Idempotency-Key) with the voided payment', async () => {
    const key = newKey();
    const payment = await paid(key);
    const headers = { 'idempotency-key': 'void_1' };
    const first = await call('POST', `/v1/payments/${payment.id}/cancel`, { key, body: {}, headers });
    expect(first.body).toMatchObject(VOIDED);
    const again = await call('POST', `/v1/payments/${payment.id}/cancel`, { key, body: {}, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('leaves a voided payment neither refundable, disputable nor capturable', async () => {
    const key = newKey();
    const payment = await paid(key);
    await cancel(key, payment.id);
    expectRefused(await refund(key, { payment: payment.id }), 409, 'invalid_state', 'This payment cannot be refunded: its status is canceled.');
    expectRefused(await openDispute(key, payment.id), 409, 'invalid_state', 'This payment cannot be disputed: its status is canceled.');
    expectRefused(await capture(key, payment.id), 409, 'invalid_state', 'This payment cannot be captured: its status is canceled.');
  });

  it("voids the dispute test card's payment before its dispute opens, and then it never does", async () => {
    const key = newKey();
    const payment = await paid(key, '4000000000000259');
    expect((await cancel(key, payment.id)).body).toMatchObject(VOIDED);
    await sleep(DISPUTE_OPEN_MS + QUIET_MS);
    expect(await disputesOf(key, payment.id)).toEqual([]);
  });

  it.each([
    ['succeeded', '4242424242424242'],
    ['pending', '4000000000007726'],
    ['requires_review', '4000000000006975'],
  ])('refuses a payment with a %s refund: 409 naming the refunds', async (status, number) => {
    const key = newKey();
    const payment = await paid(key, number);
    expect((await refund(key, { payment: payment.id, amount: 100 })).body.status).toBe(status);
    expectRefused(await cancel(key, payment.id), 409, 'invalid_state', voidRefusal('it has refunds'));
    expect((await get(key, payment.id)).body).toMatchObject({ status: 'succeeded', amount_captured: AMOUNT, canceled_after_capture: false });
  });

  it('voids a payment whose only refund failed (it gave nothing back)', async () => {
    const key = newKey();
    const payment = await paid(key, '4000000000005126');
    expect((await refund(key, { payment: payment.id }, { 'x-sandbox-settle-ms': '0' })).body.status).toBe('pending');
    // The void's read settles the refund first: failed.
    expect((await cancel(key, payment.id)).body).toMatchObject(VOIDED);
  });

  it('refuses a payment with a dispute, opened by the test helper or by the dispute test card, even once closed: 409 naming it', async () => {
    const key = newKey();
    const helped = await paid(key);
    const dispute = (await openDispute(key, helped.id)).body;
    expectRefused(await cancel(key, helped.id), 409, 'invalid_state', voidRefusal('it has a dispute'));
    expect((await call('POST', `/v1/disputes/${dispute.id}/accept`, { key, body: {} })).body.status).toBe('accepted');
    expectRefused(await cancel(key, helped.id), 409, 'invalid_state', voidRefusal('it has a dispute'));

    const disputed = await paid(key, '4000000000000259');
    await sleep(DISPUTE_OPEN_MS + QUIET_MS);
    expectRefused(await cancel(key, disputed.id), 409, 'invalid_state', voidRefusal('it has a dispute'));
    expect((await get(key, disputed.id)).body).toMatchObject({ status: 'succeeded', canceled_after_capture: false });
  });

  it.each(Object.keys(SUCCEEDED_NOT_CARD))('refuses a succeeded %s payment: only card payments are voided', async (type) => {
    const key = newKey();
    const payment = await SUCCEEDED_NOT_CARD[type]!(key);
    expect(payment).toMatchObject({ status: 'succeeded', payment_method_type: type });
    expectRefused(await cancel(key, payment.id), 409, 'invalid_state', voidRefusal('only card payments can be voided after capture'));
    expect((await get(key, payment.id)).body).toMatchObject({ status: 'succeeded', amount_captured: AMOUNT, canceled_after_capture: false });
  });
});
