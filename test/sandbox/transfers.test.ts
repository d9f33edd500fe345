// Bank transfers and crypto payments over real HTTP: the customer is shown where to send the money, says it
// is sent, and the test helpers stand for the funds arriving (fund) or never arriving (expire).
import { describe, expect, it } from 'vitest';
import { SANDBOX_TRANSFER_IBAN } from '../../sandbox/src/banks.ts';
import { METHOD_DETAILS, RETURN_URL, newKey, useSandbox, type Body } from './harness.ts';

const { url, call, createWith, get, cancel, browser } = useSandbox();

type Pushed = 'bank_transfer' | 'crypto';
const PUSHED: Pushed[] = ['bank_transfer', 'crypto'];

/** Where the money goes, as the contract describes it for each group. */
const DESTINATION: Record<Pushed, (instructions: Record<string, unknown>) => void> = {
  bank_transfer: (instructions) => expect(instructions.iban).toBe(SANDBOX_TRANSFER_IBAN),
  crypto: (instructions) => expect(instructions.address).toMatch(/^sbx1[a-z0-9]{38}$/),
};

const helper = (key: string, id: string, operation: 'fund' | 'expire', headers: Record<string, string> = {}) =>
  call('POST', `/v1/test_helpers/payments/${id}/${operation}`, { key, headers });

async function awaiting(key: string, type: Pushed, overrides: Record<string, unknown> = {}): Promise<Body> {
  const created = await createWith(key, METHOD_DETAILS[type], overrides);
  expect(created.status).toBe(200);
  expect(created.body.status).toBe('requires_customer_action');
  return created.body;
}

/** A payment whose customer said the money is sent. */
async function sent(key: string, type: Pushed): Promise<Body> {
  const created = await awaiting(key, type);
  expect((await browser('POST', `/instructions/${created.id}/sent`)).status).toBe(303);
  return (await get(key, created.id)).body;
}

// The states from which the funds may arrive or the payment expire.
const FUNDABLE: [string, (key: string, type: Pushed) => Promise<Body>][] = [
  ['requires_customer_action', (key, type) => awaiting(key, type)],
  ['processing', sent],
];

describe.each(PUSHED)('%s', (type) => {
  it('answers requires_customer_action with the instructions to display, and a unique reference', async () => {
    const key = newKey();
    const created = await awaiting(key, type, { amount: 5000, currency: 'EUR' });
    expect(created).toMatchObject({ payment_method_type: type, card: null, bank_debit: null, amount_captured: 0, error: null });
    const nextAction = created.next_action!;
    expect(Object.keys(nextAction).sort()).toEqual(['instructions', 'redirect_url', 'type']);
    expect(nextAction.type).toBe('display_instructions');
    expect(nextAction.redirect_url).toBe(`${url()}/instructions/${created.id}`);
    const instructions = nextAction.instructions!;
    expect(Object.keys(instructions).sort()).toEqual(['amount', 'currency', 'reference', type === 'crypto' ? 'address' : 'iban'].sort());
    expect(instructions).toMatchObject({ amount: 5000, currency: 'eur' });
    expect(instructions.reference).toMatch(/^[A-Z0-9-]{4,16}$/);
    DESTINATION[type](instructions);

    const other = await awaiting(key, type);
    expect(other.next_action?.instructions?.reference).not.toBe(instructions.reference);
    expect((await get(key, created.id)).body).toEqual(created);
  });

  it('shows the instructions page, whose button marks the money sent (processing) and returns to return_url', async () => {
    const key = newKey();
    const created = await awaiting(key, type);
    const instructions = created.next_action!.instructions!;
    const page = await browser('GET', `/instructions/${created.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain('$12.34');
    expect(page.text).toContain(instructions.reference);
    expect(page.text).toContain(instructions.iban ?? instructions.address);
    expect(page.text).toContain(`action="${created.id}/sent"`);
    expect(page.text).toContain('I have sent it');
    expect(page.text).not.toContain('<script');

    const pressed = await browser('POST', `/instructions/${created.id}/sent`);
    expect(pressed.status).toBe(303);
    expect(pressed.headers.get('location')).toBe(RETURN_URL);
    const processing = (await get(key, created.id)).body;
    expect(processing).toMatchObject({ status: 'processing', next_action: null, amount_captured: 0 });
    const pageAfter = await browser('GET', `/instructions/${created.id}`);
    expect(pageAfter.status).toBe(409);
    expect(pageAfter.text).toContain('no longer awaiting payment');
    expect((await browser('POST', `/instructions/${created.id}/sent`)).status).toBe(409);
  });

  it.each(FUNDABLE)('is funded from %s: succeeded, the whole amount captured', async (_status, setup) => {
    const key = newKey();
    const payment = await setup(key, type);
    const funded = await helper(key, payment.id, 'fund');
    expect(funded.status).toBe(200);
    expect(funded.body).toMatchObject({ status: 'succeeded', amount_captured: 1234, amount_capturable: 0, next_action: null, error: null });
    expect((await get(key, payment.id)).body).toEqual(funded.body);
  });

  it.each(FUNDABLE)('expires from %s: failed with transfer_expired', async (_status, setup) => {
    const key = newKey();
    const payment = await setup(key, type);
    const expired = await helper(key, payment.id, 'expire');
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ status: 'failed', amount_captured: 0, next_action: null });
    expect(expired.body.error).toEqual({ code: 'transfer_expired', message: expect.any(String), retryable: false });
  });

  it('replays a helper with its Idempotency-Key, and otherwise refuses a second one with 409 invalid_state', async () => {
    const key = newKey();
    const payment = await awaiting(key, type);
    const headers = { 'idempotency-key': 'fund_1' };
    const funded = await helper(key, payment.id, 'fund', headers);
    const replayed = await helper(key, payment.id, 'fund', headers);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(funded.body);
    expect((await helper(key, payment.id, 'expire', headers)).body.error?.code).toBe('idempotency_mismatch');
    for (const operation of ['fund', 'expire'] as const) {
      const again = await helper(key, payment.id, operation);
      expect(again.status).toBe(409);
      expect(again.body.error?.code).toBe('invalid_state');
      expect(again.body.error?.message).toContain('succeeded');
    }
  });

  it('can be canceled while awaiting the customer, not once the money is sent; a canceled one cannot be funded', async () => {
    const key = newKey();
    const payment = await awaiting(key, type);
    expect((await cancel(key, payment.id)).body).toMatchObject({ status: 'canceled', next_action: null });
    expect((await helper(key, payment.id, 'fund')).status).toBe(409);
    expect((await browser('GET', `/instructions/${payment.id}`)).status).toBe(409);

    const processing = await sent(key, type);
    const refused = await cancel(key, processing.id);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toContain('processing');
  });

  it('refuses manual capture with 400 naming capture_method', async () => {
    const answer = await createWith(newKey(), METHOD_DETAILS[type], { capture_method: 'manual' });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(/^capture_method /);
  });

  it("is funded only by its own key's helper", async () => {
    const key = newKey();
    const payment = await awaiting(key, type);
    const other = await helper(newKey(), payment.id, 'fund');
    expect(other.status).toBe(404);
    expect(other.body.error?.code).toBe('resource_missing');
    expect((await get(key, payment.id)).body.status).toBe('requires_customer_action');
  });
});

describe('test helpers', () => {
  it.each<[string, Record<string, unknown>, Record<string, string>]>([
    [
      'a card payment',
      { payment_method_type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2099, cvc: '123' }, three_ds: 'required' },
      {},
    ],
    ['a bank debit', METHOD_DETAILS.bank_debit, { 'x-sandbox-settle-ms': '600000' }],
    ['a bank redirect', METHOD_DETAILS.bank_redirect, {}],
  ])('refuse %s with 409 invalid_state, leaving it as it was', async (_label, method, headers) => {
    const key = newKey();
    const created = await createWith(key, method, {}, headers);
    for (const operation of ['fund', 'expire'] as const) {
      const answer = await helper(key, created.body.id, operation);
      expect(answer.status).toBe(409);
      expect(answer.body.error?.code).toBe('invalid_state');
    }
    expect((await get(key, created.body.id)).body).toEqual(created.body);
  });

  it('answer 404 for an unknown payment and for another helper', async () => {
    expect((await helper(newKey(), 'sbx_pay_000000000000000000000000', 'fund')).body.error?.code).toBe('resource_missing');
    const answer = await call('POST', '/v1/test_helpers/payments/sbx_pay_000000000000000000000000/refund', {});
    expect(answer.status).toBe(404);
    expect(answer.body.error?.code).toBe('not_found');
  });

  it('take no parameters', async () => {
    const key = newKey();
    const payment = await awaiting(key, 'bank_transfer');
    const answer = await call('POST', `/v1/test_helpers/payments/${payment.id}/fund`, { key, body: { amount: 1 } });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(/^amount /);
  });
});

describe('refusals', () => {
  it.each<[string, Record<string, unknown>]>([
    ['crypto.network', { payment_method_type: 'crypto', crypto: { network: 'bitcoin' } }],
    ['crypto', { payment_method_type: 'crypto' }],
    ['bank_transfer.iban', { payment_method_type: 'bank_transfer', bank_transfer: { iban: 'DE89370400440532013000' } }],
    ['bank_transfer', { payment_method_type: 'bank_transfer', bank_transfer: [] }],
  ])('refuses a bad %s with 400 naming it', async (field, method) => {
    const answer = await createWith(newKey(), method);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });
});
