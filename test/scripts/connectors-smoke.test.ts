// `npm run connectors:smoke`'s flow (scripts/lib/connectors-smoke.ts) with STRIPE_API_BASE and
// ADYEN_CHECKOUT_API_BASE at the local fakes of Stripe and Adyen in place of their test environments, which this
// machine cannot reach: its steps, expected statuses, exit codes and output. In this process, not through
// `npm run`: starting the API's code afresh in a process of its own costs seconds a run.
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startAdyenFake, type AdyenFake } from '../fakes/adyen/server.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { connectorsSmoke } from '../../scripts/lib/connectors-smoke.ts';

const stripeKey = `sk_test_${randomBytes(12).toString('hex')}`;
const adyenKey = `AQE${randomBytes(24).toString('hex')}`;

let stripe: FakeStripe;
let adyen: AdyenFake;
beforeAll(async () => {
  [stripe, adyen] = await Promise.all([startFakeStripe(), startAdyenFake()]);
});
afterAll(async () => {
  await Promise.all([stripe?.close(), adyen?.close()]);
});

/** Runs the smoke test with `env` (and this run's database server, the fakes as the processors); its exit code and output. */
async function smoke(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await connectorsSmoke(
    { DATABASE_URL: inject('databaseUrl'), STRIPE_API_BASE: stripe.url, ADYEN_CHECKOUT_API_BASE: adyen.url, ...env },
    { out: (line) => (stdout += `${line}\n`), err: (line) => (stderr += `${line}\n`) },
  );
  return { code, stdout, stderr };
}

const bothProcessors = { STRIPE_TEST_SECRET_KEY: stripeKey, ADYEN_TEST_API_KEY: adyenKey, ADYEN_TEST_MERCHANT_ACCOUNT: 'SmokeMerchant' };
const lines = (output: string) => output.trim().split('\n');
const step = (line: string) => line.split(/\s+/).slice(0, 3);

describe('npm run connectors:smoke', () => {
  it('with no keys, says in one line which variables to set, and exits 0', async () => {
    const { code, stdout } = await smoke({});
    expect(code).toBe(0);
    expect(lines(stdout)).toEqual([
      "connectors:smoke: skipped: set STRIPE_TEST_SECRET_KEY, and/or ADYEN_TEST_API_KEY + ADYEN_TEST_MERCHANT_ACCOUNT to run the card flow against the processors' test environments",
    ]);
  });

  it('refuses a live Stripe key and an Adyen key without its merchant account, without printing them', async () => {
    const live = `sk_live_${randomBytes(12).toString('hex')}`;
    const refusedLive = await smoke({ STRIPE_TEST_SECRET_KEY: live });
    expect(refusedLive).toMatchObject({ code: 1, stdout: '' });
    expect(refusedLive.stderr).toBe('connectors:smoke: STRIPE_TEST_SECRET_KEY must be a test secret key (sk_test_…)\n');
    const halfAdyen = await smoke({ ADYEN_TEST_API_KEY: adyenKey });
    expect(halfAdyen).toMatchObject({ code: 1, stdout: '', stderr: 'connectors:smoke: adyen: set ADYEN_TEST_MERCHANT_ACCOUNT too\n' });
  });

  it('drives pay, capture and a partial refund at each processor through our API: one line per step with both ends’ ids', async () => {
    const { code, stdout, stderr } = await smoke(bothProcessors);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const output = lines(stdout);
    expect(output.map(step)).toEqual([
      ['stripe', 'account', 'TEST'],
      ['stripe', 'create', 'REQUIRES_PAYMENT_METHOD'],
      ['stripe', 'confirm', 'REQUIRES_CAPTURE'],
      ['stripe', 'capture', 'SUCCEEDED'],
      ['stripe', 'refund', 'SUCCEEDED'],
      ['adyen', 'account', 'TEST'],
      ['adyen', 'create', 'REQUIRES_PAYMENT_METHOD'],
      ['adyen', 'confirm', 'REQUIRES_CAPTURE'],
      // Adyen's capture and refund are acknowledged only: the script says so, and expects exactly that.
      ['adyen', 'capture', 'PROCESSING'],
      ['adyen', 'create', 'REQUIRES_PAYMENT_METHOD'],
      ['adyen', 'confirm', 'SUCCEEDED'],
      ['adyen', 'refund', 'PENDING'],
      ['connectors:smoke:', 'passed', '(stripe,'],
    ]);
    expect(output.filter((line) => line.includes('received by Adyen'))).toHaveLength(2);

    // The ids printed are the processors' own: the fakes' PaymentIntent and refund, and Adyen's pspReferences.
    const stripeIntent = stdout.match(/stripe {2}capture .* stripe (pi_\w+)/)![1]!;
    expect(stripe.intents.get(stripeIntent)).toMatchObject({ status: 'succeeded', capture_method: 'manual', amount: 2000 });
    expect(stripe.requests.find((request) => request.path === '/v1/refunds')?.params).toMatchObject({ payment_intent: stripeIntent, amount: '500' });
    expect(stdout).toMatch(/stripe {2}refund .* stripe re_\w+/);
    const adyenCaptured = stdout.match(/adyen {3}capture .* adyen ([0-9A-F]{16})/)![1]!;
    expect(adyen.requests.map((request) => request.path)).toEqual([
      '/v71/payments',
      `/v71/payments/${adyenCaptured}/captures`,
      '/v71/payments',
      expect.stringMatching(/^\/v71\/payments\/[0-9A-F]{16}\/refunds$/),
    ]);
    expect(adyen.requests[0]!.body).toMatchObject({ merchantAccount: 'SmokeMerchant', paymentMethod: { type: 'scheme', number: '5555555555554444' } });
    expect(adyen.requests[3]!.body).toMatchObject({ amount: { value: 500, currency: 'EUR' } });
    expect(adyen.invalid).toEqual([]);

    expect(stdout).not.toContain(stripeKey);
    expect(stdout).not.toContain(adyenKey);
  });

  it('stops at the first unexpected answer with exit code 1, and goes no further', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unreachable = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const requestsBefore = adyen.requests.length;

    const { code, stdout, stderr } = await smoke({ ...bothProcessors, STRIPE_API_BASE: unreachable });
    expect(code).toBe(1);
    const output = lines(stdout);
    expect(output.map(step)).toEqual([
      ['stripe', 'account', 'TEST'],
      ['stripe', 'create', 'REQUIRES_PAYMENT_METHOD'],
      ['stripe', 'confirm', 'ERROR'],
    ]);
    expect(output.at(-1)).toMatch(/CONNECTOR_ERROR/);
    expect(stderr).toMatch(/^connectors:smoke: failed: stripe confirm: /);
    expect(adyen.requests.length).toBe(requestsBefore);
  });
});
