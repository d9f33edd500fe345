// What every payment method group shares over real HTTP: payment_method_type and its one detail object, the
// payment object's shape, lookup by reference, and the guard that no answer shows a secret.
import { describe, expect, it } from 'vitest';
import { PAYMENT_METHOD_TYPES } from '../../sandbox/src/processors.ts';
import { FUTURE_YEAR, METHOD_DETAILS, PAYMENT_KEYS, leaks, newKey, useSandbox } from './harness.ts';

const { call, createWith } = useSandbox();

const CARD = { payment_method_type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: FUTURE_YEAR, cvc: '123' }, three_ds: 'automatic' };

/** A body of each group that passes every check before its payment method is looked at. */
const VALID: Record<string, Record<string, unknown>> = {
  card: CARD,
  ...METHOD_DETAILS,
  wallet: { payment_method_type: 'wallet', wallet: { type: 'sandbox_pay', payment_token: 'wtok_x' } },
  pay_later: { payment_method_type: 'pay_later', pay_later: { type: 'sandbox_later', payment_token: 'wtok_x' } },
};

/** The fields that carry each group's payment method (the contract's list). */
const FIELDS: Record<string, Record<string, unknown>> = {
  card: { card: CARD.card, payment_method_token: 'pm_x', card_cvc: '123', off_session: true, setup_future_usage: 'off_session' },
  bank_debit: { bank_debit: METHOD_DETAILS.bank_debit.bank_debit },
  wallet: { wallet: VALID.wallet!.wallet },
  pay_later: { pay_later: VALID.pay_later!.pay_later },
  bank_redirect: { bank_redirect: { bank: 'sandbox_bank' } },
  bank_transfer: { bank_transfer: {} },
  crypto: { crypto: { network: 'sandbox_chain' } },
};

describe('payment_method_type', () => {
  it('the tables below cover exactly the groups of the sandbox', () => {
    expect([...PAYMENT_METHOD_TYPES].sort()).toEqual(Object.keys(VALID).sort());
    expect(Object.keys(FIELDS).sort()).toEqual(Object.keys(VALID).sort());
  });

  it.each(['sepa', 'Card', 42])('refuses %s with 400 naming payment_method_type', async (type) => {
    const answer = await createWith(newKey(), { ...CARD, payment_method_type: type });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message).toMatch(/^payment_method_type /);
  });

  const strays = Object.keys(VALID).flatMap((type) =>
    Object.entries(FIELDS)
      .filter(([group]) => group !== type)
      .flatMap(([, fields]) => Object.entries(fields).map(([field, value]) => [type, field, value] as const)),
  );
  it.each(strays)('refuses a %s payment that also sends %s, with 400 naming that field', async (type, field, value) => {
    const answer = await createWith(newKey(), { ...VALID[type], [field]: value });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message).toMatch(new RegExp(`^${field} is not allowed with payment_method_type ${type}`));
  });

  it.each(Object.keys(VALID).filter((type) => type !== 'card'))('refuses a %s payment without its detail object, naming it', async (type) => {
    const answer = await createWith(newKey(), { payment_method_type: type });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(new RegExp(`^${type} is required`));
  });
});

describe('the payment object of every group', () => {
  // The groups that need no customer step before the create (wallets are covered in wallets.test.ts).
  it.each(['card', ...Object.keys(METHOD_DETAILS)])('%s: the same keys, its own details only, and found by reference', async (type) => {
    const key = newKey();
    const reference = `att_${type}`;
    const created = await createWith(key, VALID[type]!, { reference });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(PAYMENT_KEYS);
    expect(created.body.payment_method_type).toBe(type);
    expect(created.body.card === null).toBe(type !== 'card');
    expect(created.body.bank_debit === null).toBe(type !== 'bank_debit');
    const found = await call('GET', `/v1/payments?reference=${reference}`, { key });
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(created.body.id);
  });
});

describe('the leak guard of every answer (test/sandbox/harness.ts)', () => {
  const json = (body: unknown) => ({ text: JSON.stringify(body), headers: new Headers({ 'content-type': 'application/json' }) });
  const html = (text: string) => ({ text, headers: new Headers({ 'content-type': 'text/html' }) });

  it('finds a card number, an IBAN or a payment token anywhere, and a CVC as a whole value or under a secret key', () => {
    expect(leaks(json({ message: 'card 4242424242424242 declined' }), ['4242424242424242'])).toEqual(['4242424242424242']);
    expect(leaks(html('<dd>DE89370400440532013000</dd>'), ['DE89370400440532013000'])).toEqual(['DE89370400440532013000']);
    expect(leaks(json({ a: { b: 'wtok_abcdefghij' } }), ['wtok_abcdefghij'])).toEqual(['wtok_abcdefghij']);
    expect(leaks(json({ card: { check: '987' } }), ['987'])).toEqual(['987']);
    expect(leaks(html('<dd>987</dd>'), ['987'])).toEqual(['987']);
    expect(leaks(json({ card: { cvc: 'x' } }), [])).toEqual(['key cvc']);
  });

  it('does not mistake an id, a timestamp, an amount or a reference for a CVC', () => {
    expect(leaks(json({ id: 'sbx_pay_987', updated_ms: 1987, message: 'at most 987 (the amount capturable)', reference: '987' }), ['987'])).toEqual([]);
    expect(leaks(html('<dd>$9.87</dd>'), ['987'])).toEqual([]);
  });
});
