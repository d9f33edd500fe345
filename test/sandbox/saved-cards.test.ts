// Saved cards over real HTTP: setup_future_usage gives a payment_method_token, which later pays as the card
// itself would, for its own API key only.
import { describe, expect, it, vi } from 'vitest';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import { EXPECTED_CARDS, FUTURE_YEAR, METHOD_DETAILS, RETURN_URL, SAVE, cvcFor, newKey, useSandbox } from './harness.ts';

const { call, create, get, capture, browser, saved, payWithToken } = useSandbox();

describe('saving a card', () => {
  it.each(TEST_CARDS.map((card) => card.number))('card %s is saved only if accepted, and its token then pays exactly as the card does', async (number) => {
    const expected = EXPECTED_CARDS[number]!;
    const key = newKey();
    const saving = await create(key, SAVE, { number, cvc: cvcFor(number) });
    expect(saving.status).toBe(expected.http);
    expect(saving.body.status).toBe(expected.status);
    if (expected.status === 'failed') {
      // A declined card is not kept.
      expect(saving.body.payment_method_token).toBeNull();
      return;
    }
    const token = saving.body.payment_method_token!;
    expect(token).toMatch(/^pm_[A-Za-z0-9]{24}$/);
    expect((await get(key, saving.body.id)).body.payment_method_token).toBe(token);

    const paid = await payWithToken(key, token);
    expect(paid.status).toBe(expected.http);
    expect(paid.body).toMatchObject({ status: expected.status, error: expected.error, payment_method_type: 'card', payment_method_token: null });
    expect(paid.body.card).toEqual({ brand: expected.brand, last4: number.slice(-4), exp_month: 12, exp_year: FUTURE_YEAR });
    expect(paid.body.id).not.toBe(saving.body.id);
  });

  it('gives a token for an authorised manual-capture payment and for a challenged one, and each token is new', async () => {
    const key = newKey();
    const manual = await create(key, { ...SAVE, capture_method: 'manual' });
    expect(manual.body.status).toBe('requires_capture');
    const challenged = await create(key, { ...SAVE, three_ds: 'required' });
    expect(challenged.body.status).toBe('requires_device_data');
    const tokens = [manual.body.payment_method_token, challenged.body.payment_method_token];
    for (const token of tokens) expect(token).toMatch(/^pm_[A-Za-z0-9]{24}$/);
    expect(new Set(tokens).size).toBe(2);
  });

  it('gives no token without setup_future_usage', async () => {
    const created = await create(newKey());
    expect(created.body.payment_method_token).toBeNull();
  });

  it('answers a replayed saving create with the same payment and token, saving nothing new', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'save_1' };
    const first = await create(key, SAVE, {}, headers);
    const again = await create(key, SAVE, {}, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('paying with a saved card', () => {
  it('remembers the holder name, and a saved 3DS card is challenged on the challenge page again', async () => {
    const key = newKey();
    const token = await saved(key, '4000002500003155', { holder_name: 'Ada Lovelace' });
    const paid = await payWithToken(key, token);
    expect(paid.body.status).toBe('requires_device_data');
    const page = await browser('GET', `/challenge/${paid.body.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('ending in 3155');
    expect(page.text).toContain('Ada Lovelace');
    expect((await browser('POST', `/challenge/${paid.body.id}/complete`)).status).toBe(303);
    expect((await get(key, paid.body.id)).body.status).toBe('succeeded');
  });

  it('takes three_ds "required" and manual capture like a card does', async () => {
    const key = newKey();
    const token = await saved(key);
    expect((await payWithToken(key, token, { three_ds: 'required' })).body.status).toBe('requires_device_data');
    const manual = await payWithToken(key, token, { capture_method: 'manual' });
    expect(manual.body).toMatchObject({ status: 'requires_capture', amount_capturable: 1234 });
    expect((await capture(key, manual.body.id)).body).toMatchObject({ status: 'succeeded', amount_captured: 1234 });
  });

  it('saves nothing new when setup_future_usage comes with a token: the card is saved already', async () => {
    const key = newKey();
    const token = await saved(key);
    const paid = await payWithToken(key, token, SAVE);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'succeeded', payment_method_token: null });
  });

  it('can pay many times with one token', async () => {
    const key = newKey();
    const token = await saved(key);
    for (const amount of [100, 200, 300]) {
      const paid = await payWithToken(key, token, { amount });
      expect(paid.body).toMatchObject({ status: 'succeeded', amount_captured: amount });
    }
  });

  it('declines a saved card once it has expired, as the card itself would be', async () => {
    const key = newKey();
    const now = new Date();
    const token = await saved(key, '4242424242424242', { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      const paid = await payWithToken(key, token);
      expect(paid.status).toBe(402);
      expect(paid.body.error).toEqual({ code: 'expired_card', message: 'Your card has expired.', retryable: false });
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    ['an unknown token', async () => 'pm_000000000000000000000000'],
    ['a token of another key', async () => saved(newKey())],
    ['a string that is no token', async () => 'not-a-token'],
  ])('refuses %s with 400 invalid_payment_method_token naming payment_method_token', async (_label, token) => {
    const key = newKey();
    const answer = await payWithToken(key, await token());
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_payment_method_token');
    expect(answer.body.error?.message).toMatch(/^payment_method_token /);
  });

  it("keeps the owner's token working after another key tried it", async () => {
    const owner = newKey();
    const token = await saved(owner);
    expect((await payWithToken(newKey(), token)).status).toBe(400);
    expect((await payWithToken(owner, token)).body.status).toBe('succeeded');
  });
});

describe('saved-card refusals', () => {
  const cardFields = { number: '4242424242424242', exp_month: 12, exp_year: FUTURE_YEAR, cvc: '123' };
  const common = { amount: 1234, currency: 'USD', capture_method: 'automatic', three_ds: 'automatic', return_url: RETURN_URL };

  it.each<[string, string, Record<string, unknown>]>([
    ['payment_method_token', 'with card', { card: cardFields, payment_method_token: 'pm_x' }],
    ['card_cvc', 'with card', { card: cardFields, card_cvc: '123' }],
    ['card_cvc', 'missing with a token', { payment_method_token: 'pm_x' }],
    ['card_cvc', 'of 2 digits', { payment_method_token: 'pm_x', card_cvc: '12' }],
    ['card', 'missing, with no token either', {}],
    ['setup_future_usage', '"on_session"', { card: cardFields, setup_future_usage: 'on_session' }],
    ['setup_future_usage', 'on a bank debit', { ...METHOD_DETAILS.bank_debit, setup_future_usage: 'off_session' }],
    ['payment_method_token', 'on a bank debit', { ...METHOD_DETAILS.bank_debit, payment_method_token: 'pm_x' }],
    ['three_ds', 'missing on a card payment', { card: cardFields, three_ds: undefined }],
  ])('refuses %s %s with 400 naming it', async (field, _label, fields) => {
    const answer = await call('POST', '/v1/payments', { key: newKey(), body: { ...common, ...fields } });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });
});
