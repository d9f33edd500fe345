// Steering the processors over real HTTP (`/_control`, docs/sandbox.md "Steering the sandbox"): its validation,
// an outage's 503 on every API route and the recovery, the seeded share of soft declines and its exact repeats,
// and the test cards that keep their own answers.
import { afterEach, describe, expect, it } from 'vitest';
import { loadSandboxConfig, startSandboxFromConfig } from '../../sandbox/src/index.ts';
import { EXPECTED_CARDS, TEST_IBAN, cvcFor, expectRefused, newFauxpayKey, newKey, paymentInput, useSandbox } from './harness.ts';

const { call, create, paid } = useSandbox({ payoutSettleMs: 600_000, refundSettleMs: 600_000 });

const control = (body: unknown) => call('POST', '/_control', { key: null, body });
const RESET = { declineRate: 0, outage: false };

afterEach(async () => {
  for (const processor of ['sandbox', 'fauxpay']) expect((await control({ processor, ...RESET })).status).toBe(200);
});

/** Whether each of `count` approvable card payments of `key` on `prefix` was declined (with the steered code), in order. */
async function declines(count: number, prefix: string, key: string): Promise<boolean[]> {
  const outcomes: boolean[] = [];
  for (let index = 0; index < count; index += 1) {
    const created = await call('POST', `${prefix}/payments`, { key, body: paymentInput() });
    expect([200, 402], created.text).toContain(created.status);
    if (created.status === 402) expect(created.body.error?.code).toBe('issuer_unavailable');
    outcomes.push(created.status === 402);
  }
  return outcomes;
}

describe('/_control', () => {
  it('answers the state of one processor, which starts normal and keeps what a POST leaves out', async () => {
    expect((await call('GET', '/_control?processor=fauxpay', { key: null })).body).toEqual({ processor: 'fauxpay', declineRate: 0, outage: false, seed: 1 });
    expect((await control({ processor: 'fauxpay', declineRate: 0.25, seed: 7 })).body).toEqual({
      processor: 'fauxpay',
      declineRate: 0.25,
      outage: false,
      seed: 7,
    });
    expect((await control({ processor: 'fauxpay', outage: true })).body).toEqual({ processor: 'fauxpay', declineRate: 0.25, outage: true, seed: 1 });
    expect((await call('GET', '/_control?processor=sandbox', { key: null })).body).toEqual({ processor: 'sandbox', declineRate: 0, outage: false, seed: 1 });
  });

  it.each([
    [{}, 'processor is required.'],
    [{ processor: 'stripe' }, 'processor must be one of sandbox, fauxpay.'],
    [{ processor: 'sandbox', declineRate: 1.5 }, 'declineRate must be from 0 to 1.'],
    [{ processor: 'sandbox', declineRate: -0.1 }, 'declineRate must be from 0 to 1.'],
    [{ processor: 'sandbox', declineRate: '0.5' }, 'declineRate must be a number.'],
    [{ processor: 'sandbox', outage: 'yes' }, 'outage must be a boolean.'],
    [{ processor: 'sandbox', seed: 1.5 }, 'seed must be an integer.'],
    [{ processor: 'sandbox', seed: -1 }, 'seed must be from 0 to 4294967295.'],
    [{ processor: 'sandbox', rate: 0.5 }, 'rate is not a known field.'],
  ])('refuses %j with a 400 naming the field', async (body, message) => {
    expectRefused(await control(body), 400, 'invalid_request', message);
  });

  it('refuses a GET without a known processor', async () => {
    expectRefused(await call('GET', '/_control', { key: null }), 400, 'invalid_request', 'processor is required.');
    expectRefused(await call('GET', '/_control?processor=x', { key: null }), 400, 'invalid_request', 'processor must be one of sandbox, fauxpay.');
  });

  it('with SANDBOX_CONTROL_TOKEN set, requires it', async () => {
    expect(() => loadSandboxConfig({ SANDBOX_CONTROL_TOKEN: 'short' })).toThrow('SANDBOX_CONTROL_TOKEN: must be 16 to 256 characters without spaces');
    const token = 'control-token-for-tests-0123456789';
    const guarded = await startSandboxFromConfig(loadSandboxConfig({ SANDBOX_PORT: '0', SANDBOX_CONTROL_TOKEN: token }));
    try {
      const body = { processor: 'sandbox', outage: true };
      for (const sent of [null, newKey(), `${token}x`]) {
        const refused = await call('POST', '/_control', { key: sent, body, base: guarded.url });
        expectRefused(refused, 401, 'invalid_control_token', /SANDBOX_CONTROL_TOKEN/);
      }
      expect((await call('POST', '/_control', { key: token, body, base: guarded.url })).body.outage).toBe(true);
    } finally {
      await guarded.close();
    }
  });
});

describe('outage', () => {
  it('answers 503 to every API route of that processor only, until it is set false; /_control keeps working', async () => {
    const key = newKey();
    const payment = await paid(key);
    const refund = await call('POST', '/v1/refunds', { key, body: { payment: payment.id, amount: 1 } });
    const payout = await call('POST', '/v1/payouts', {
      key,
      body: {
        amount: 100,
        currency: 'EUR',
        reference: 'po_1',
        destination: { type: 'bank_account', account_holder_name: 'Erika Mustermann', iban: TEST_IBAN },
      },
    });
    const routes: [string, string, unknown?][] = [
      ['POST', '/v1/payments', paymentInput()],
      ['GET', `/v1/payments/${payment.id}`],
      ['GET', '/v1/payments?reference=att_test'],
      ['POST', `/v1/payments/${payment.id}/capture`, {}],
      ['POST', '/v1/refunds', { payment: payment.id, amount: 1 }],
      ['GET', `/v1/refunds/${refund.body.id}`],
      ['GET', `/v1/payouts/${payout.body.id}`],
      ['POST', '/v1/webhook_endpoints', { url: 'https://shop.example/hooks', secret: 'a-secret-of-16-chars' }],
      ['GET', '/v1/no_such_route'],
    ];
    expect((await control({ processor: 'sandbox', outage: true })).body.outage).toBe(true);
    for (const [method, path, body] of routes) {
      expectRefused(await call(method, path, { key, body }), 503, 'service_unavailable', /outage/);
    }
    expectRefused(await call('GET', '/v1/payments/x', { key: null }), 503, 'service_unavailable', /outage/);
    expect((await call('POST', '/fauxpay/v1/payments', { key: newFauxpayKey(), body: paymentInput() })).status).toBe(200);
    expect((await call('GET', '/_control?processor=sandbox', { key: null })).body.outage).toBe(true);

    expect((await control({ processor: 'sandbox', outage: false })).body.outage).toBe(false);
    expect((await call('GET', `/v1/payments/${payment.id}`, { key })).body.status).toBe('succeeded');
    expect((await create(key)).status).toBe(200);
    expect((await call('GET', `/v1/refunds/${refund.body.id}`, { key })).status).toBe(200);
  });
});

describe('declineRate', () => {
  const COUNT = 1000;

  it('declines a share of approvable card payments within a few points of the rate, with the soft decline, the same every run of a seed', async () => {
    expect((await control({ processor: 'fauxpay', declineRate: 0.3, seed: 42 })).status).toBe(200);
    const first = await declines(COUNT, '/fauxpay/v1', newFauxpayKey());
    const share = first.filter(Boolean).length / COUNT;
    expect(share).toBeGreaterThan(0.27);
    expect(share).toBeLessThan(0.33);

    expect((await control({ processor: 'fauxpay', declineRate: 0.3, seed: 42 })).status).toBe(200);
    expect(await declines(COUNT, '/fauxpay/v1', newFauxpayKey())).toEqual(first);
    expect((await control({ processor: 'fauxpay', declineRate: 0.3, seed: 43 })).status).toBe(200);
    expect(await declines(COUNT, '/fauxpay/v1', newFauxpayKey())).not.toEqual(first);
  });

  it('declines with issuer_unavailable, a stored failed payment, and saves no card', async () => {
    await control({ processor: 'sandbox', declineRate: 1 });
    const key = newKey();
    const created = await call('POST', '/v1/payments', { key, body: paymentInput({ setup_future_usage: 'off_session' }) });
    expect(created.status).toBe(402);
    expect(created.body).toMatchObject({
      status: 'failed',
      payment_method_token: null,
      error: { code: 'issuer_unavailable', message: "The card's issuer could not be reached. Try again.", retryable: true },
    });
    expect((await call('GET', `/v1/payments/${created.body.id}`, { key })).body).toEqual(created.body);
  });

  it('leaves the declining and 3D Secure test cards, other payment methods and the other processor as they are', async () => {
    await control({ processor: 'sandbox', declineRate: 1 });
    const key = newKey();
    for (const [number, expected] of Object.entries(EXPECTED_CARDS).filter(([, { http, status }]) => http !== 200 || status !== 'succeeded')) {
      const created = await create(key, {}, { number, cvc: cvcFor(number) });
      expect(created.status, number).toBe(expected.http);
      expect(created.body, number).toMatchObject({ status: expected.status, error: expected.error });
    }
    expect((await create(key, { three_ds: 'required' })).body.status).toBe('requires_device_data');
    const debit = await call('POST', '/v1/payments', {
      key,
      body: {
        ...paymentInput(),
        card: undefined,
        three_ds: undefined,
        payment_method_type: 'bank_debit',
        bank_debit: { account_holder_name: 'E M', iban: TEST_IBAN },
      },
    });
    expect(debit.body.status).toBe('processing');
    expect((await call('POST', '/fauxpay/v1/payments', { key: newFauxpayKey(), body: paymentInput() })).status).toBe(200);
  });

  it('is undone by the reset', async () => {
    await control({ processor: 'sandbox', declineRate: 1 });
    expect(await declines(3, '/v1', newKey())).toEqual([true, true, true]);
    expect((await control({ processor: 'sandbox', ...RESET })).body).toEqual({ processor: 'sandbox', declineRate: 0, outage: false, seed: 1 });
    expect(await declines(20, '/v1', newKey())).toEqual(Array(20).fill(false));
  });
});
