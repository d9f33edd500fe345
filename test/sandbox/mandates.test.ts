// Saved cards as mandates over real HTTP, as the service's connector uses them: a merchant-initiated payment
// off session (no CVC, never a 3D Secure challenge) for every saved test card, the payment method object, its
// revocation by the merchant (answer only) or by the customer's bank (the test helper, with a signed
// `payment_method.revoked` callback), a revoked token refused for every payment, idempotency, isolation between
// keys and personalities, and every refusal naming its field.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import {
  EXPECTED_CARDS,
  FUTURE_YEAR,
  atFrozenTime,
  cvcFor,
  expectRefused,
  newFauxpayKey,
  newKey,
  sleep,
  useCallbackReceivers,
  useSandbox,
  type Answer,
} from './harness.ts';

const { call, create, get, capture, browser, saved, payWithToken, chargeOffSession } = useSandbox();

/** Long enough for a callback that would be sent to have arrived. */
const QUIET_MS = 200;
const { registered, onlyCallback, deliveries } = useCallbackReceivers(call, 'whsec_sandbox_mandates_0123456789', QUIET_MS);

afterEach(() => {
  vi.useRealTimers();
});

const FAUXPAY = '/fauxpay/v1';
const AMOUNT = 1234;
const PAYMENT_METHOD_KEYS = ['id', 'object', 'status', 'card', 'created', 'updated_ms'];
const REVOKED = /^payment_method_token was revoked/;

type Headers = Record<string, string>;

const getPaymentMethod = (key: string, token: string, prefix = '/v1') => call('GET', `${prefix}/payment_methods/${token}`, { key });
/** The merchant's revocation: its own call, answered and nothing else. */
const revoke = (key: string, token: string, headers: Headers = {}, prefix = '/v1', body: unknown = {}) =>
  call('POST', `${prefix}/payment_methods/${token}/revoke`, { key, body, headers });
/** The customer's bank revoking the card (the test helper): answered, and told by callback. */
const bankRevoke = (key: string, token: string, headers: Headers = {}, prefix = '/v1') =>
  call('POST', `${prefix}/test_helpers/payment_methods/${token}/revoke`, { key, body: {}, headers });

/** Every revocation: by the merchant, or by the customer's bank. */
const REVOCATIONS: Record<string, (key: string, token: string) => Promise<Answer>> = { merchant: revoke, bank: bankRevoke };

/**
 * What a card's off-session payment does, from the contract: as the card itself does (EXPECTED_CARDS), except
 * that a challenge never happens (a merchant-initiated payment is exempt), so the challenge card succeeds.
 */
const offSessionStatus = (number: string) => (EXPECTED_CARDS[number]!.status === 'requires_device_data' ? 'succeeded' : EXPECTED_CARDS[number]!.status);

/** The test cards a saving payment accepts (authorised or challenged): a declined card is never saved. */
const SAVABLE = TEST_CARDS.map((card) => card.number).filter((number) => EXPECTED_CARDS[number]!.status !== 'failed');

describe('paying off session with a saved card', () => {
  it('the test cards that can be saved are those a payment accepts, the 3D Secure card among them', () => {
    expect(SAVABLE).toContain('4000002500003155');
    expect(SAVABLE).not.toContain('4000000000000002');
  });

  it.each(SAVABLE)('card %s: charged off session without a CVC, never challenged, even with three_ds "required"', async (number) => {
    const expected = EXPECTED_CARDS[number]!;
    const key = newKey();
    const token = await saved(key, number);
    for (const threeDs of ['automatic', 'required']) {
      const charged = await chargeOffSession(key, token, { three_ds: threeDs, reference: `mit_${threeDs}` });
      expect(charged.status, charged.text).toBe(200);
      expect(charged.body).toMatchObject({
        status: offSessionStatus(number),
        amount_captured: AMOUNT,
        error: null,
        next_action: null,
        payment_method_type: 'card',
        payment_method_token: null,
        card: { brand: expected.brand, last4: number.slice(-4), exp_month: 12, exp_year: FUTURE_YEAR },
      });
      expect((await get(key, charged.body.id)).text).toBe(charged.text);
    }
  });

  it('the same card with its customer there (card_cvc, off_session absent or false) is still challenged', async () => {
    const key = newKey();
    const token = await saved(key, '4000002500003155');
    expect((await payWithToken(key, token)).body.status).toBe('requires_device_data');
    expect((await payWithToken(key, token, { off_session: false })).body.status).toBe('requires_device_data');
    expect((await payWithToken(key, token, { three_ds: 'required', off_session: false })).body.status).toBe('requires_device_data');
  });

  it('takes manual capture, and captures like any card payment', async () => {
    const key = newKey();
    const token = await saved(key, '4000002500003155');
    const held = await chargeOffSession(key, token, { capture_method: 'manual' });
    expect(held.body).toMatchObject({ status: 'requires_capture', amount_capturable: AMOUNT, amount_captured: 0 });
    expect((await capture(key, held.body.id, { amount_to_capture: 1000 })).body).toMatchObject({ status: 'succeeded', amount_captured: 1000 });
  });

  it('can charge one saved card many times, with its saving payment and the others unchanged', async () => {
    const key = newKey();
    const saving = await create(key, { setup_future_usage: 'off_session' });
    const token = saving.body.payment_method_token!;
    const amounts = [100, 200, 300];
    const charges = await Promise.all(amounts.map((amount) => chargeOffSession(key, token, { amount })));
    expect(charges.map((charge) => charge.body.amount_captured)).toEqual(amounts);
    expect(new Set(charges.map((charge) => charge.body.id)).size).toBe(3);
    expect((await get(key, saving.body.id)).text).toBe(saving.text);
  });

  it('declines a saved card once it has expired, off session too', async () => {
    const key = newKey();
    const now = new Date();
    const token = await saved(key, '4242424242424242', { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() });
    await atFrozenTime(async (at) => {
      const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - Date.now();
      at(nextMonth - 1);
      expect((await chargeOffSession(key, token)).body.status).toBe('succeeded');
      at(nextMonth);
      const declined = await chargeOffSession(key, token);
      expect(declined.status).toBe(402);
      expect(declined.body).toMatchObject({ status: 'failed', error: { code: 'expired_card', message: 'Your card has expired.', retryable: false } });
    });
  });

  it('answers a replayed off-session payment with the same payment, charged once', async () => {
    const key = newKey();
    const token = await saved(key);
    const headers = { 'idempotency-key': 'mit_1' };
    const first = await chargeOffSession(key, token, { reference: 'mit_once' }, headers);
    const replay = await chargeOffSession(key, token, { reference: 'mit_once' }, headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectRefused(await chargeOffSession(key, token, { reference: 'mit_once', amount: 1 }, headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    // Revoked since: the replay still answers the payment made before, a new payment is refused.
    expect((await revoke(key, token)).body.status).toBe('revoked');
    expect((await chargeOffSession(key, token, { reference: 'mit_once' }, headers)).text).toBe(first.text);
    expectRefused(await chargeOffSession(key, token, { reference: 'mit_once' }), 400, 'payment_method_revoked', REVOKED);
  });

  it('charges a card that fauxpay accepts and sandbox declines, saved at fauxpay, off session there', async () => {
    const key = newFauxpayKey();
    const token = await saved(key, '4000000000000119', {}, FAUXPAY);
    const charged = await chargeOffSession(key, token, {}, {}, FAUXPAY);
    expect(charged.body).toMatchObject({ status: 'succeeded', card: { last4: '0119' } });
    // Each personality has its own vault.
    expectRefused(await chargeOffSession(newKey(), token), 400, 'invalid_payment_method_token', /^payment_method_token /);
  });
});

describe('off_session refusals', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['card_cvc', 'card_cvc with off_session: true', { card_cvc: '123' }],
    ['off_session', 'off_session that is no boolean', { off_session: 'true' }],
    ['off_session', 'off_session that is 1', { off_session: 1 }],
    ['three_ds', 'three_ds missing', { three_ds: undefined }],
  ])('refuses %s (%s) with 400 invalid_request naming it, and charges nothing', async (field, _label, overrides) => {
    const key = newKey();
    const token = await saved(key);
    const answer = await chargeOffSession(key, token, { reference: 'refused', ...overrides });
    expectRefused(answer, 400, 'invalid_request', new RegExp(`^${field} `));
    expectRefused(await call('GET', '/v1/payments?reference=refused', { key }), 404, 'resource_missing', /^No payment /);
  });

  it('names card_cvc as not allowed off session, and as required with its customer there', async () => {
    const key = newKey();
    const token = await saved(key);
    const offSession = await chargeOffSession(key, token, { card_cvc: '123' });
    expectRefused(offSession, 400, 'invalid_request', 'card_cvc is not allowed with off_session: true (the customer is not there to type it).');
    const onSession = await payWithToken(key, token, { off_session: false, card_cvc: undefined });
    expectRefused(onSession, 400, 'invalid_request', /^card_cvc is required with payment_method_token/);
  });

  it.each<[string, Record<string, unknown>]>([
    ['with card', { card: { number: '4242424242424242', exp_month: 12, exp_year: FUTURE_YEAR, cvc: '123' } }],
    ['without payment_method_token', {}],
  ])('refuses off_session %s with 400 naming off_session', async (_label, method) => {
    const answer = await call('POST', '/v1/payments', {
      key: newKey(),
      body: {
        amount: AMOUNT,
        currency: 'USD',
        capture_method: 'automatic',
        three_ds: 'automatic',
        return_url: 'https://shop.example/r',
        off_session: true,
        ...method,
      },
    });
    expectRefused(answer, 400, 'invalid_request', 'off_session is only for payment_method_token (a saved card).');
  });

  it.each([
    ['an unknown token', async () => 'pm_000000000000000000000000'],
    ['a token of another key', async () => saved(newKey())],
  ])('refuses %s off session with 400 invalid_payment_method_token', async (_label, token) => {
    expectRefused(await chargeOffSession(newKey(), await token()), 400, 'invalid_payment_method_token', /^payment_method_token /);
  });
});

describe('the payment method object', () => {
  it.each(SAVABLE)('card %s: GET answers the saved card, active, its card but never its number', async (number) => {
    const key = newKey();
    await atFrozenTime(async () => {
      const token = await saved(key, number, { holder_name: 'Ada Lovelace' });
      const answer = await getPaymentMethod(key, token);
      expect(answer.status).toBe(200);
      const object = JSON.parse(answer.text) as Record<string, unknown>;
      expect(Object.keys(object)).toEqual(PAYMENT_METHOD_KEYS);
      expect(object).toEqual({
        id: token,
        object: 'payment_method',
        status: 'active',
        card: { brand: EXPECTED_CARDS[number]!.brand, last4: number.slice(-4), exp_month: 12, exp_year: FUTURE_YEAR },
        created: Math.floor(Date.now() / 1000),
        updated_ms: Date.now(),
      });
    });
  });

  it("answers 404 resource_missing for another key's token and for unknown ones, on every route", async () => {
    const owner = newKey();
    const token = await saved(owner);
    const other = newKey();
    const missing = `No payment method ${token}.`;
    expectRefused(await getPaymentMethod(other, token), 404, 'resource_missing', missing);
    expectRefused(await revoke(other, token), 404, 'resource_missing', missing);
    expectRefused(await bankRevoke(other, token), 404, 'resource_missing', missing);
    expectRefused(await getPaymentMethod(owner, 'pm_000000000000000000000000'), 404, 'resource_missing', 'No payment method pm_000000000000000000000000.');
    // fauxpay has a vault of its own.
    expectRefused(await getPaymentMethod(newFauxpayKey(), token, FAUXPAY), 404, 'resource_missing', missing);
    // Nothing changed for the owner.
    expect((await getPaymentMethod(owner, token)).body.status).toBe('active');
    expect((await chargeOffSession(owner, token)).body.status).toBe('succeeded');
  });

  it('has no other routes', async () => {
    const key = newKey();
    const token = await saved(key);
    for (const [method, path] of [
      ['POST', `/v1/payment_methods/${token}`],
      ['GET', `/v1/payment_methods/${token}/revoke`],
      ['GET', `/v1/test_helpers/payment_methods/${token}/revoke`],
      ['POST', `/v1/payment_methods/${token}/detach`],
      ['POST', `/v1/test_helpers/payment_methods/${token}/activate`],
      ['GET', '/v1/payment_methods'],
    ] as const) {
      expectRefused(await call(method, path, { key, ...(method === 'POST' ? { body: {} } : {}) }), 404, 'not_found', `There is no route ${method} ${path}.`);
    }
  });

  it('needs a secret key of the personality', async () => {
    expectRefused(await call('GET', '/v1/payment_methods/pm_x', { key: null }), 401, 'invalid_api_key', /^Send Authorization/);
    expectRefused(await call('POST', '/fauxpay/v1/payment_methods/pm_x/revoke', { key: newKey(), body: {} }), 401, 'invalid_api_key', /^Send Authorization/);
  });
});

describe('revocation', () => {
  it.each(Object.keys(REVOCATIONS))('once revoked by the %s, the token refuses every payment, with its customer or off session', async (by) => {
    const key = newKey();
    const token = await saved(key);
    expect((await REVOCATIONS[by]!(key, token)).body.status).toBe('revoked');
    const attempts = {
      'off session': await chargeOffSession(key, token, { reference: 'after_revoke' }),
      'off session, manual capture': await chargeOffSession(key, token, { reference: 'after_revoke', capture_method: 'manual' }),
      'with its CVC': await payWithToken(key, token, { reference: 'after_revoke' }),
      'with its CVC and off_session: false': await payWithToken(key, token, { reference: 'after_revoke', off_session: false }),
    };
    for (const [label, answer] of Object.entries(attempts)) {
      expect(answer.status, label).toBe(400);
      expect(answer.body.error?.code, label).toBe('payment_method_revoked');
      expect(answer.body.error?.message, label).toMatch(REVOKED);
    }
    expectRefused(await call('GET', '/v1/payments?reference=after_revoke', { key }), 404, 'resource_missing', /^No payment /);
    // Field refusals come first: they are the request's own fault, whatever the token.
    expectRefused(await chargeOffSession(key, token, { card_cvc: '123' }), 400, 'invalid_request', /^card_cvc /);
  });

  it('by the merchant: the answer tells, no callback; asking again answers it unchanged', async () => {
    const { key, receiver } = await registered();
    const token = await saved(key);
    await atFrozenTime(async (at) => {
      const active = await getPaymentMethod(key, token);
      at(5000);
      const revoked = await revoke(key, token);
      expect(revoked.status).toBe(200);
      expect(JSON.parse(revoked.text)).toEqual({ ...JSON.parse(active.text), status: 'revoked', updated_ms: Date.now() });
      expect((await getPaymentMethod(key, token)).text).toBe(revoked.text);
      at(6000);
      const again = await revoke(key, token);
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(again.text).toBe(revoked.text);
    });
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
    expect(await deliveries(key)).toEqual([]);
  });

  it("by the customer's bank: the answer, and a signed payment_method.revoked callback carrying what GET answers", async () => {
    const { key, receiver } = await registered();
    const token = await saved(key, '5555555555554444');
    const revoked = await bankRevoke(key, token);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: token, object: 'payment_method', status: 'revoked', card: { brand: 'mastercard', last4: '4444' } });
    const event = await onlyCallback(key, receiver, 'payment_method.revoked');
    expect(JSON.stringify(event.data.object)).toBe(revoked.text);
    const [delivery] = await deliveries(key);
    expect(delivery).toMatchObject({ event_id: event.id, type: 'payment_method.revoked', object_id: token, payment_id: null, delivered: true });
  });

  it('by the bank again, or after the merchant: 409 invalid_state, nothing changed, no callback', async () => {
    const { key, receiver } = await registered();
    const byBank = await saved(key);
    expect((await bankRevoke(key, byBank)).status).toBe(200);
    await receiver.waitForRequests(1, 3000);
    const byMerchant = await saved(key);
    expect((await revoke(key, byMerchant)).status).toBe(200);
    for (const token of [byBank, byMerchant]) {
      const before = await getPaymentMethod(key, token);
      expectRefused(await bankRevoke(key, token), 409, 'invalid_state', 'This payment method cannot be revoked: its status is revoked.');
      expect((await getPaymentMethod(key, token)).text).toBe(before.text);
    }
    // The merchant may still ask: the card is revoked already, and says so.
    expect((await revoke(key, byBank)).body.status).toBe('revoked');
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(key)).map(({ type, object_id }) => [type, object_id])).toEqual([['payment_method.revoked', byBank]]);
  });

  it('revokes one saved card only: another of the key, the same card saved again, go on paying', async () => {
    const key = newKey();
    const first = await saved(key);
    const second = await saved(key);
    expect(first).not.toBe(second);
    expect((await revoke(key, first)).status).toBe(200);
    expect((await chargeOffSession(key, second)).body.status).toBe('succeeded');
    expect((await getPaymentMethod(key, second)).body.status).toBe('active');
  });

  it('takes an empty body only', async () => {
    const key = newKey();
    const token = await saved(key);
    expectRefused(await revoke(key, token, {}, '/v1', { reason: 'customer_request' }), 400, 'invalid_request', 'reason is not a known field.');
    expect((await getPaymentMethod(key, token)).body.status).toBe('active');
    // A POST with no body at all means no parameters.
    expect((await call('POST', `/v1/payment_methods/${token}/revoke`, { key })).body.status).toBe('revoked');
  });
});

describe('idempotency', () => {
  it.each(Object.keys(REVOCATIONS))('answers a repeated revocation by the %s as it first did, once', async (by) => {
    const { key, receiver } = await registered();
    const token = await saved(key);
    const headers = { 'idempotency-key': `revoke_${by}` };
    const send = by === 'bank' ? bankRevoke : revoke;
    const first = await send(key, token, headers);
    expect(first.status).toBe(200);
    const replay = await send(key, token, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    // The key on the other revocation's route is another request.
    const other = by === 'bank' ? revoke : bankRevoke;
    expectRefused(await other(key, token, headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(by === 'bank' ? 1 : 0);
  });

  it('does not record a refused revocation, so its key may be used again', async () => {
    const key = newKey();
    const token = await saved(key);
    const headers = { 'idempotency-key': 'revoke_refused' };
    expect((await revoke(key, 'pm_000000000000000000000000', headers)).status).toBe(404);
    expect((await revoke(key, 'pm_000000000000000000000000', headers)).status).toBe(404);
    expect((await revoke(key, token, headers)).body.status).toBe('revoked');
  });
});

describe('fauxpay', () => {
  it('has payment methods and both revocations under its own prefix, but sends no callbacks', async () => {
    const { receiver } = await registered();
    const key = newFauxpayKey();
    const byMerchant = await saved(key, '4242424242424242', {}, FAUXPAY);
    const byBank = await saved(key, '5555555555554444', {}, FAUXPAY);
    expect((await getPaymentMethod(key, byMerchant, FAUXPAY)).body).toMatchObject({ object: 'payment_method', status: 'active' });
    expect((await chargeOffSession(key, byMerchant, {}, {}, FAUXPAY)).body.status).toBe('succeeded');
    expect((await revoke(key, byMerchant, {}, FAUXPAY)).body.status).toBe('revoked');
    expect((await bankRevoke(key, byBank, {}, FAUXPAY)).body.status).toBe('revoked');
    expectRefused(await bankRevoke(key, byBank, {}, FAUXPAY), 409, 'invalid_state', /^This payment method cannot be revoked/);
    for (const token of [byMerchant, byBank]) {
      expectRefused(await chargeOffSession(key, token, {}, {}, FAUXPAY), 400, 'payment_method_revoked', REVOKED);
      expectRefused(await payWithToken(key, token, { card_cvc: cvcFor('4242424242424242') }, FAUXPAY), 400, 'payment_method_revoked', REVOKED);
    }
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
  });
});

describe('the challenge page of a saved card', () => {
  it('is never reached off session, and a challenged payment before the revocation still completes', async () => {
    const key = newKey();
    const token = await saved(key, '4000002500003155');
    const challenged = await payWithToken(key, token);
    expect(challenged.body.status).toBe('requires_device_data');
    expect((await revoke(key, token)).status).toBe(200);
    // The payment was authorised to go ahead before: the revocation stops new payments only.
    await browser('GET', `/challenge/${challenged.body.id}`);
    expect((await browser('POST', `/challenge/${challenged.body.id}/complete`)).status).toBe(303);
    expect((await get(key, challenged.body.id)).body.status).toBe('succeeded');
  });
});
