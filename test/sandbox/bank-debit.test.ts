// Bank debits over real HTTP: answered `processing`, settled (succeeded or failed by the test IBAN) once the
// settlement delay has passed, by whichever read comes first.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TEST_BANK_ACCOUNTS } from '../../sandbox/src/banks.ts';
import { startSandbox } from '../../sandbox/src/server.ts';
import { METHOD_DETAILS, atFrozenTime, methodInput, newKey, useSandbox, type Body } from './harness.ts';

const { call, createWith, get, capture, cancel } = useSandbox();

// Written from the contract, not derived from TEST_BANK_ACCOUNTS, so a wrong row in the table fails here.
const failedWith = (code: string) => ({ status: 'failed', amount_captured: 0, error: { code, message: expect.any(String), retryable: false } });
const EXPECTED_DEBITS: Record<string, { status: string; amount_captured: number; error: unknown }> = {
  DE89370400440532013000: { status: 'succeeded', amount_captured: 1234, error: null },
  DE62370400440532013001: failedWith('insufficient_funds'),
  DE35370400440532013002: failedWith('account_closed'),
  // The expiring payout test account (payouts.test.ts): a debit from it succeeds.
  DE08370400440532013003: { status: 'succeeded', amount_captured: 1234, error: null },
};

const debit = (iban: string, account: Record<string, unknown> = {}) => ({
  payment_method_type: 'bank_debit',
  bank_debit: { ...METHOD_DETAILS.bank_debit.bank_debit, iban, ...account },
});

const SETTLE_NOW = { 'x-sandbox-settle-ms': '0' };

afterEach(() => {
  vi.useRealTimers();
});

describe('test bank accounts', () => {
  it('the expectations below cover exactly the rows of the bank account table', () => {
    expect(TEST_BANK_ACCOUNTS.map((account) => account.iban).sort()).toEqual(Object.keys(EXPECTED_DEBITS).sort());
  });

  it.each(TEST_BANK_ACCOUNTS.map((account) => account.iban))('a debit from %s is processing, then settles as its row says', async (iban) => {
    const key = newKey();
    const created = await createWith(key, debit(iban), {}, SETTLE_NOW);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      status: 'processing',
      payment_method_type: 'bank_debit',
      card: null,
      bank_debit: { last4: iban.slice(-4) },
      payment_method_token: null,
      next_action: null,
      error: null,
      amount_captured: 0,
      amount_capturable: 0,
    });
    const settled = await get(key, created.body.id);
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ ...EXPECTED_DEBITS[iban], amount_capturable: 0, next_action: null, bank_debit: { last4: iban.slice(-4) } });
    expect(settled.body.updated_ms).toBeGreaterThan(created.body.updated_ms);
  });

  it.each(['GB33BUKB20201555555555', 'FR1420041010050500013M02606', 'NL91ABNA0417164300'])(
    'settles a debit from any other valid IBAN (%s) as succeeded',
    async (iban) => {
      const key = newKey();
      const created = await createWith(key, debit(iban), {}, SETTLE_NOW);
      expect(created.body.status).toBe('processing');
      expect((await get(key, created.body.id)).body).toMatchObject({ status: 'succeeded', amount_captured: 1234 });
    },
  );
});

describe('settlement', () => {
  it('settles after the default 3 s: processing until then, never earlier', async () => {
    await atFrozenTime(async (at) => {
      const key = newKey();
      const created = await createWith(key, debit('DE89370400440532013000'));
      at(2999);
      expect((await get(key, created.body.id)).body.status).toBe('processing');
      at(3000);
      const settled = await get(key, created.body.id);
      expect(settled.body.status).toBe('succeeded');
      expect(settled.body.updated_ms).toBeGreaterThanOrEqual(created.body.created * 1000 + 3000);
    });
  });

  it('takes the delay of the x-sandbox-settle-ms header, and of the bankDebitSettleMs option', async () => {
    const other = await startSandbox({ port: 0, bankDebitSettleMs: 10_000 });
    try {
      await atFrozenTime(async (at) => {
        const key = newKey();
        const byHeader = await createWith(key, debit('DE62370400440532013001'), {}, { 'x-sandbox-settle-ms': '500' });
        const byOption = await call('POST', '/v1/payments', { key, body: methodInput(debit('DE89370400440532013000')), base: other.url });
        expect(byOption.body.status).toBe('processing');
        at(499);
        expect((await get(key, byHeader.body.id)).body.status).toBe('processing');
        at(500);
        expect((await get(key, byHeader.body.id)).body.error?.code).toBe('insufficient_funds');
        at(9999);
        expect((await call('GET', `/v1/payments/${byOption.body.id}`, { key, base: other.url })).body.status).toBe('processing');
        at(10_000);
        expect((await call('GET', `/v1/payments/${byOption.body.id}`, { key, base: other.url })).body.status).toBe('succeeded');
      });
    } finally {
      await other.close();
    }
  });

  it.each<[string, (key: string, created: Body) => Promise<{ body: Body }>]>([
    ['a GET by id', (key, created) => get(key, created.id)],
    ['a GET by reference', (key, created) => call('GET', `/v1/payments?reference=${created.reference}`, { key })],
    [
      'an idempotent replay of the create',
      (key) => createWith(key, debit('DE35370400440532013002'), { reference: 'att_replayed' }, { 'idempotency-key': 'debit_1' }),
    ],
  ])('is applied by %s, whichever read comes first', async (_label, read) => {
    const key = newKey();
    const created = await createWith(key, debit('DE35370400440532013002'), { reference: 'att_replayed' }, { 'idempotency-key': 'debit_1', ...SETTLE_NOW });
    expect(created.body.status).toBe('processing');
    const first = await read(key, created.body);
    expect(first.body).toMatchObject({ id: created.body.id, status: 'failed', error: { code: 'account_closed' } });
  });

  it.each(['600001', '-1', 'soon', '1e3'])('refuses x-sandbox-settle-ms: %s with 400 naming the header', async (value) => {
    const answer = await createWith(newKey(), debit('DE89370400440532013000'), {}, { 'x-sandbox-settle-ms': value });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(/^x-sandbox-settle-ms /);
  });

  it('accepts the longest delay, 600000 ms', async () => {
    const key = newKey();
    const created = await createWith(key, debit('DE89370400440532013000'), {}, { 'x-sandbox-settle-ms': '600000' });
    expect(created.status).toBe(200);
    expect((await get(key, created.body.id)).body.status).toBe('processing');
  });
});

describe('what a debit refuses', () => {
  it('can be neither captured nor canceled while processing', async () => {
    const key = newKey();
    const created = await createWith(key, debit('DE89370400440532013000'), {}, { 'x-sandbox-settle-ms': '600000' });
    for (const answer of [await cancel(key, created.body.id), await capture(key, created.body.id)]) {
      expect(answer.status).toBe(409);
      expect(answer.body.error?.code).toBe('invalid_state');
      expect(answer.body.error?.message).toContain('processing');
    }
    expect((await get(key, created.body.id)).body.status).toBe('processing');
  });

  it('refuses an IBAN whose check digits are wrong with 400 invalid_iban naming bank_debit.iban', async () => {
    const answer = await createWith(newKey(), debit('DE89370400440532013009'));
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_iban');
    expect(answer.body.error?.message).toMatch(/^bank_debit\.iban /);
  });

  it.each<[string, Record<string, unknown>]>([
    ['bank_debit.iban', debit('de89370400440532013000')],
    ['bank_debit.iban', debit('DE89 3704 0044 0532 0130 00')],
    ['bank_debit.iban', debit('DE8937040044')],
    ['bank_debit.iban', debit('DE89370400440532013000', { iban: undefined })],
    ['bank_debit.account_holder_name', debit('DE89370400440532013000', { account_holder_name: '' })],
    ['bank_debit.account_holder_name', debit('DE89370400440532013000', { account_holder_name: undefined })],
    ['bank_debit.bic', debit('DE89370400440532013000', { bic: 'COBADEFFXXX' })],
    ['bank_debit', { payment_method_type: 'bank_debit' }],
    ['bank_debit', { payment_method_type: 'bank_debit', bank_debit: 'DE89370400440532013000' }],
    ['capture_method', { ...debit('DE89370400440532013000'), capture_method: 'manual' }],
  ])('refuses a bad %s with 400 invalid_request naming it', async (field, method) => {
    const answer = await createWith(newKey(), method);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });
});
