// Wallets and pay-later over real HTTP: the merchant opens a session, the customer answers in the wallet's
// sheet (no key), and the single-use payment token of that answer pays for exactly the session's amount.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WALLETS, WALLET_DECISIONS, type WalletType } from '../../sandbox/src/wallets.ts';
import { HOUR_MS, newKey, useSandbox, type Answer } from './harness.ts';

const { call, createWith, get, capture } = useSandbox();

// Written from the contract, not derived from the wallet tables, so a wrong row in a table fails here.
const EXPECTED_WALLETS: Record<string, { field: string }> = {
  sandbox_pay: { field: 'wallet' },
  sandbox_later: { field: 'pay_later' },
};
const EXPECTED_DECISIONS: Record<string, { http: number; status: string; error: unknown }> = {
  approve: { http: 200, status: 'succeeded', error: null },
  decline: { http: 402, status: 'failed', error: { code: 'wallet_declined', message: expect.any(String), retryable: false } },
};
const WALLET_TYPES = Object.keys(WALLETS) as WalletType[];

const openSession = (key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  call('POST', '/v1/sessions', { key, body: { wallet: 'sandbox_pay', amount: 1234, currency: 'USD', ...body }, headers });

/** The customer's answer in the wallet's sheet: no key, the session token only. */
const answerSheet = (sessionToken: string, decision: string) => call('POST', `/sessions/${sessionToken}/${decision}`, { key: null });

/** The body part that pays with a wallet's payment token. */
const paidBy = (wallet: WalletType, paymentToken: string) => {
  const field = EXPECTED_WALLETS[wallet]!.field;
  return { payment_method_type: field, [field]: { type: wallet, payment_token: paymentToken } };
};

/** A payment token of `key` for `wallet` and the session's amount, answered with `decision`. */
async function paymentToken(key: string, wallet: WalletType = 'sandbox_pay', decision = 'approve', session: Record<string, unknown> = {}): Promise<string> {
  const opened = await openSession(key, { wallet, ...session });
  expect(opened.status).toBe(200);
  const answered = await answerSheet(opened.body.session_token, decision);
  expect(answered.status).toBe(200);
  expect(answered.body.payment_token).toMatch(/^wtok_[A-Za-z0-9]+$/);
  return answered.body.payment_token;
}

function expectRefusedToken(answer: Answer, field: string) {
  expect(answer.status).toBe(400);
  expect(answer.body.error?.code).toBe('invalid_payment_token');
  expect(answer.body.error?.message).toMatch(new RegExp(`^${field}\\.payment_token `));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('sessions', () => {
  it('the expectations cover exactly the rows of the wallet and decision tables', () => {
    expect(WALLET_TYPES.sort()).toEqual(Object.keys(EXPECTED_WALLETS).sort());
    expect(Object.keys(WALLET_DECISIONS).sort()).toEqual(Object.keys(EXPECTED_DECISIONS).sort());
    for (const [wallet, { field }] of Object.entries(EXPECTED_WALLETS)) expect(WALLETS[wallet as WalletType].paymentMethodType).toBe(field);
  });

  it.each(WALLET_TYPES)('opens a %s session of the documented shape, expiring in an hour', async (wallet) => {
    const before = Math.floor(Date.now() / 1000);
    const opened = await openSession(newKey(), { wallet, amount: 500, currency: 'EUR' });
    expect(opened.status).toBe(200);
    expect(Object.keys(opened.body).sort()).toEqual(['amount', 'currency', 'expires_at', 'id', 'object', 'session_token', 'wallet'].sort());
    expect(opened.body).toMatchObject({ object: 'session', wallet, amount: 500, currency: 'eur' });
    expect(opened.body.id).toMatch(/^sess_[A-Za-z0-9]{24}$/);
    expect(opened.body.session_token).toMatch(/^[A-Za-z0-9_]{20,}$/);
    expect(opened.body.expires_at).toBeGreaterThanOrEqual(before + 3600);
    expect(opened.body.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 3600);
  });

  it('answers a replayed session create with the same session', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'session_1' };
    const first = await openSession(key, {}, headers);
    const again = await openSession(key, {}, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await openSession(key, { amount: 1 }, headers)).body.error?.code).toBe('idempotency_mismatch');
  });

  it.each<[string, Record<string, unknown>]>([
    ['wallet', { wallet: 'apple_pay' }],
    ['wallet', { wallet: undefined }],
    ['amount', { amount: 0 }],
    ['currency', { currency: 'euro' }],
    ['capture_method', { capture_method: 'manual' }],
  ])('refuses a bad %s with 400 naming it', async (field, body) => {
    const answer = await openSession(newKey(), body);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });

  it('needs a secret key', async () => {
    const answer = await call('POST', '/v1/sessions', { key: null, body: { wallet: 'sandbox_pay', amount: 1, currency: 'USD' } });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('invalid_api_key');
  });
});

describe("the wallet's sheet", () => {
  it('answers a repeated answer with the same payment token, and refuses the other answer with 409', async () => {
    const opened = await openSession(newKey());
    const first = await answerSheet(opened.body.session_token, 'approve');
    expect(Object.keys(first.body)).toEqual(['payment_token']);
    const again = await answerSheet(opened.body.session_token, 'approve');
    expect(again.body.payment_token).toBe(first.body.payment_token);
    const other = await answerSheet(opened.body.session_token, 'decline');
    expect(other.status).toBe(409);
    expect(other.body.error?.code).toBe('invalid_state');
  });

  it('answers 404 for an unknown session, an unknown answer, and a GET', async () => {
    const unknown = await answerSheet('sst_unknown', 'approve');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.code).toBe('resource_missing');
    const opened = await openSession(newKey());
    expect((await answerSheet(opened.body.session_token, 'maybe')).status).toBe(404);
    expect((await call('GET', `/sessions/${opened.body.session_token}/approve`, { key: null })).status).toBe(404);
    // The session is still open to a real answer.
    expect((await answerSheet(opened.body.session_token, 'approve')).status).toBe(200);
  });

  it('refuses an answer once the session has expired', async () => {
    const opened = await openSession(newKey());
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(opened.body.expires_at * 1000 + 1000);
    const answer = await answerSheet(opened.body.session_token, 'approve');
    expect(answer.status).toBe(409);
    expect(answer.body.error?.code).toBe('session_expired');
  });
});

describe('paying with a payment token', () => {
  describe.each(WALLET_TYPES)('%s', (wallet) => {
    const field = EXPECTED_WALLETS[wallet]!.field;

    it.each(Object.keys(EXPECTED_DECISIONS))('after "%s", the payment ends at once as the answer says', async (decision) => {
      const expected = EXPECTED_DECISIONS[decision]!;
      const key = newKey();
      const token = await paymentToken(key, wallet, decision);
      const paid = await createWith(key, paidBy(wallet, token));
      expect(paid.status).toBe(expected.http);
      expect(paid.body).toMatchObject({
        status: expected.status,
        error: expected.error,
        payment_method_type: field,
        card: null,
        bank_debit: null,
        next_action: null,
        amount_captured: expected.status === 'succeeded' ? 1234 : 0,
      });
      expect((await get(key, paid.body.id)).body).toEqual(paid.body);
    });

    it('holds an approved manual-capture payment for capture', async () => {
      const key = newKey();
      const paid = await createWith(key, paidBy(wallet, await paymentToken(key, wallet)), { capture_method: 'manual' });
      expect(paid.body).toMatchObject({ status: 'requires_capture', amount_capturable: 1234 });
      expect((await capture(key, paid.body.id, { amount_to_capture: 1000 })).body).toMatchObject({ status: 'succeeded', amount_captured: 1000 });
    });

    it('pays once per token, declined or not', async () => {
      for (const decision of Object.keys(EXPECTED_DECISIONS)) {
        const key = newKey();
        const token = await paymentToken(key, wallet, decision);
        expect((await createWith(key, paidBy(wallet, token))).status).toBe(EXPECTED_DECISIONS[decision]!.http);
        expectRefusedToken(await createWith(key, paidBy(wallet, token)), field);
      }
    });

    it.each<[string, Record<string, unknown>]>([
      ['amount', { amount: 1235 }],
      ['currency', { currency: 'EUR' }],
    ])('refuses a payment whose %s differs from the session, and the token stays usable', async (_label, overrides) => {
      const key = newKey();
      const token = await paymentToken(key, wallet);
      expectRefusedToken(await createWith(key, paidBy(wallet, token), overrides), field);
      expect((await createWith(key, paidBy(wallet, token))).body.status).toBe('succeeded');
    });

    it('refuses an unknown token, and a token of another key', async () => {
      const key = newKey();
      expectRefusedToken(await createWith(key, paidBy(wallet, 'wtok_unknown')), field);
      const othersToken = await paymentToken(newKey(), wallet);
      expectRefusedToken(await createWith(key, paidBy(wallet, othersToken)), field);
    });

    it('refuses a token whose session has expired', async () => {
      const key = newKey();
      const token = await paymentToken(key, wallet);
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + HOUR_MS + 1000);
      expectRefusedToken(await createWith(key, paidBy(wallet, token)), field);
    });
  });

  it("refuses one wallet's token in the other's field", async () => {
    const key = newKey();
    const laterToken = await paymentToken(key, 'sandbox_later');
    expectRefusedToken(await createWith(key, { payment_method_type: 'wallet', wallet: { type: 'sandbox_pay', payment_token: laterToken } }), 'wallet');
    const payToken = await paymentToken(key, 'sandbox_pay');
    expectRefusedToken(await createWith(key, { payment_method_type: 'pay_later', pay_later: { type: 'sandbox_later', payment_token: payToken } }), 'pay_later');
  });

  it.each<[string, Record<string, unknown>]>([
    ['wallet.type', { payment_method_type: 'wallet', wallet: { type: 'sandbox_later', payment_token: 'wtok_x' } }],
    ['wallet.payment_token', { payment_method_type: 'wallet', wallet: { type: 'sandbox_pay' } }],
    ['wallet', { payment_method_type: 'wallet' }],
    ['pay_later.type', { payment_method_type: 'pay_later', pay_later: { type: 'klarna', payment_token: 'wtok_x' } }],
    ['wallet', { payment_method_type: 'pay_later', wallet: { type: 'sandbox_pay', payment_token: 'wtok_x' } }],
  ])('refuses a bad %s with 400 naming it', async (field, method) => {
    const answer = await createWith(newKey(), method);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });
});
