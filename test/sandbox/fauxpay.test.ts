// The second processor personality, fauxpay, over real HTTP: the same API under /fauxpay/v1 with its own
// keys and memory, card and bank debit only, and card answers that differ from the sandbox personality's.
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import { PAYMENT_METHOD_TYPES, PROCESSORS } from '../../sandbox/src/processors.ts';
import { startSandbox } from '../../sandbox/src/server.ts';
import { EXPECTED_CARDS, FUTURE_YEAR, METHOD_DETAILS, cvcFor, newFauxpayKey, newKey, paymentInput, useSandbox, type ExpectedCard } from './harness.ts';

const { call, createWith, get, browser } = useSandbox();

const FAUXPAY = '/fauxpay/v1';

const NOT_SUPPORTED = { brand: 'amex', http: 402, status: 'failed', error: { code: 'card_not_supported', message: expect.any(String), retryable: true } };

// Written from the contract: where fauxpay answers a card otherwise than the sandbox personality does.
const FAUXPAY_CARDS: Record<string, ExpectedCard> = {
  '4000000000000119': { brand: 'visa', http: 200, status: 'succeeded', error: null },
  '378282246310005': NOT_SUPPORTED,
  '371449635398431': NOT_SUPPORTED,
  '340000000000009': NOT_SUPPORTED,
};
const FAUXPAY_METHODS = ['card', 'bank_debit'];

const fauxpay = PROCESSORS.find((processor) => processor.name === 'fauxpay')!;

const fauxCreate = (key: string, overrides: Record<string, unknown> = {}, card: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call('POST', `${FAUXPAY}/payments`, { key, body: paymentInput(overrides, card), headers });

describe('fauxpay cards', () => {
  it("has a rule for each of its table's overrides, and the table is what the contract says", () => {
    expect(fauxpay).toMatchObject({ apiPrefix: FAUXPAY, keyPrefix: 'sk_fauxpay_' });
    for (const rule of fauxpay.cardRules) {
      const number = 'number' in rule ? rule.number : Object.keys(FAUXPAY_CARDS).find((candidate) => FAUXPAY_CARDS[candidate]!.brand === rule.brand);
      expect(number, JSON.stringify(rule)).toBeDefined();
    }
  });

  it.each([...new Set([...TEST_CARDS.map((card) => card.number), ...Object.keys(FAUXPAY_CARDS)])])(
    "card %s gives fauxpay's answer (the sandbox's unless fauxpay overrides it)",
    async (number) => {
      const expected = FAUXPAY_CARDS[number] ?? EXPECTED_CARDS[number]!;
      const key = newFauxpayKey();
      const created = await fauxCreate(key, {}, { number, cvc: cvcFor(number) });
      expect(created.status).toBe(expected.http);
      expect(created.body).toMatchObject({ status: expected.status, error: expected.error, payment_method_type: 'card' });
      expect(created.body.card).toEqual({ brand: expected.brand, last4: number.slice(-4), exp_month: 12, exp_year: FUTURE_YEAR });
      expect((await get(key, created.body.id, FAUXPAY)).body).toEqual(created.body);
    },
  );

  it('still declines an expired Amex card and an expired 4000000000000119 as expired', async () => {
    for (const number of ['378282246310005', '4000000000000119']) {
      const created = await fauxCreate(newFauxpayKey(), {}, { number, cvc: cvcFor(number), exp_year: 2000 });
      expect(created.body.error?.code).toBe('expired_card');
    }
  });

  it('runs 3D Secure on the shared challenge page', async () => {
    const key = newFauxpayKey();
    const created = await fauxCreate(key, {}, { number: '4000002500003155' });
    expect(created.body.next_action?.redirect_url).toMatch(new RegExp(`/challenge/${created.body.id}$`));
    expect((await browser('GET', `/challenge/${created.body.id}`)).status).toBe(200);
    expect((await browser('POST', `/challenge/${created.body.id}/complete`)).status).toBe(303);
    expect((await get(key, created.body.id, FAUXPAY)).body.status).toBe('succeeded');
  });

  it('saves cards as the sandbox does, and its tokens pay on fauxpay only', async () => {
    const key = newFauxpayKey();
    const saving = await fauxCreate(key, { setup_future_usage: 'off_session' }, { number: '4000000000000119' });
    const token = saving.body.payment_method_token!;
    expect(token).toMatch(/^pm_/);
    const paid = await createWith(key, { payment_method_token: token, card_cvc: '123', three_ds: 'automatic' }, {}, {}, FAUXPAY);
    expect(paid.body.status).toBe('succeeded');
    const elsewhere = await createWith(newKey(), { payment_method_token: token, card_cvc: '123', three_ds: 'automatic' });
    expect(elsewhere.body.error?.code).toBe('invalid_payment_method_token');
  });
});

describe('fauxpay payment methods', () => {
  it('supports exactly card and bank_debit', () => {
    expect([...fauxpay.paymentMethodTypes].sort()).toEqual([...FAUXPAY_METHODS].sort());
  });

  it.each(PAYMENT_METHOD_TYPES.filter((type) => !FAUXPAY_METHODS.includes(type)))(
    'refuses %s with 400 payment_method_not_supported naming payment_method_type',
    async (type) => {
      const detail =
        type === 'wallet' || type === 'pay_later' ? { [type]: { type: type === 'wallet' ? 'sandbox_pay' : 'sandbox_later', payment_token: 'wtok_x' } } : {};
      const method = { ...(METHOD_DETAILS as Record<string, Record<string, unknown>>)[type], payment_method_type: type, ...detail };
      const answer = await createWith(newFauxpayKey(), method, {}, {}, FAUXPAY);
      expect(answer.status).toBe(400);
      expect(answer.body.error?.code).toBe('payment_method_not_supported');
      expect(answer.body.error?.message).toMatch(/^payment_method_type /);
    },
  );

  it('settles a bank debit as the sandbox does', async () => {
    const key = newFauxpayKey();
    const created = await createWith(
      key,
      { ...METHOD_DETAILS.bank_debit, bank_debit: { account_holder_name: 'E', iban: 'DE62370400440532013001' } },
      {},
      { 'x-sandbox-settle-ms': '0' },
      FAUXPAY,
    );
    expect(created.body.status).toBe('processing');
    expect((await get(key, created.body.id, FAUXPAY)).body.error?.code).toBe('insufficient_funds');
  });

  it('has no wallet sessions', async () => {
    for (const wallet of ['sandbox_pay', 'sandbox_later']) {
      const answer = await call('POST', `${FAUXPAY}/sessions`, { key: newFauxpayKey(), body: { wallet, amount: 100, currency: 'USD' } });
      expect(answer.status).toBe(400);
      expect(answer.body.error?.code).toBe('payment_method_not_supported');
      expect(answer.body.error?.message).toMatch(/^wallet /);
    }
  });
});

describe('fauxpay keys and memory', () => {
  it.each([
    ['a sandbox key on fauxpay', FAUXPAY, newKey()],
    ['a fauxpay key on the sandbox', '/v1', newFauxpayKey()],
    ['a short fauxpay key', FAUXPAY, 'sk_fauxpay_short'],
  ])('refuses %s with 401 invalid_api_key', async (_label, prefix, key) => {
    const answer = await call('POST', `${prefix}/payments`, { key, body: paymentInput() });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('invalid_api_key');
    expect(answer.body.error?.message).toContain(prefix === FAUXPAY ? 'sk_fauxpay_' : 'sk_sandbox_');
  });

  it("keeps each personality's payments to itself", async () => {
    const key = newFauxpayKey();
    const created = await fauxCreate(key, { reference: 'att_faux' });
    expect((await call('GET', `/v1/payments/${created.body.id}`, {})).status).toBe(404);
    expect((await call('GET', `${FAUXPAY}/payments?reference=att_faux`, { key })).body.id).toBe(created.body.id);
    expect((await call('GET', `${FAUXPAY}/payments/${created.body.id}`, { key: newFauxpayKey() })).status).toBe(404);
  });

  it('answers 404 for a route fauxpay does not have', async () => {
    const answer = await call('GET', `${FAUXPAY}/nowhere`, { key: newFauxpayKey() });
    expect(answer.status).toBe(404);
    expect(answer.body.error?.code).toBe('not_found');
  });

  it('delays fauxpay answers by latencyMs too', async () => {
    const slow = await startSandbox({ port: 0, latencyMs: 300 });
    try {
      const answer = await call('POST', `${FAUXPAY}/payments`, { key: newFauxpayKey(), body: paymentInput(), base: slow.url });
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeGreaterThanOrEqual(300);
    } finally {
      await slow.close();
    }
  });
});
