// The entry points as an operator runs them: one clear line and exit code 1 when a dependency is missing
// or configuration is wrong; a clean exit on SIGTERM; the worker running jobs; and the demo command
// creating, migrating and printing the same demo keys on every start.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { testEnv } from '../support/api.ts';
import { runEntry } from '../support/processes.ts';
import { scheduleAndAwaitCompletion } from '../support/worker.ts';

describe('start-up failures print one actionable line and exit 1', () => {
  it.each([
    [
      'PostgreSQL is unreachable',
      { DATABASE_URL: 'postgresql://postgres:hunter2@127.0.0.1:1/nowhere' },
      /^api: error: cannot reach PostgreSQL at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/nowhere \(ECONNREFUSED\); start it with: pg_ctlcluster/,
    ],
    ['Redis is unreachable', { REDIS_URL: 'redis://127.0.0.1:1' }, /^api: error: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(.+\); start it with: redis-server/],
    ['PORT is not a number', { PORT: 'abc' }, /^api: error: PORT: /],
    [
      'the database does not exist',
      { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/payments_absent_db' },
      /^api: error: the database of .* does not exist; create and migrate it with: npm run db:migrate/,
    ],
  ])('%s', async (_label, overrides, expected) => {
    const run = runEntry('api', testEnv(overrides));
    expect(await run.exited).toBe(1);
    const lines = run.output.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(expected);
    expect(run.output.stderr).not.toContain('hunter2');
  });
});

it('the API role serves until SIGTERM, then exits 0', async () => {
  const run = runEntry('api', testEnv({ LOG_LEVEL: 'info' }));
  const [, url] = await run.waitFor(/"url":"([^"]+)".*"msg":"api listening"/);
  expect((await fetch(`${url}/health`)).status).toBe(200);
  expect(await run.stop()).toBe(0);
  expect(run.output.stderr).toContain('SIGTERM received, shutting down');
});

describe('the worker role', () => {
  it('refuses a bad setting with one line', async () => {
    const run = runEntry('worker', testEnv({ WORKER_CONCURRENCY: '0' }));
    expect(await run.exited).toBe(1);
    expect(run.output.stderr.trim()).toMatch(/^worker: error: WORKER_CONCURRENCY: [^\n]+$/);
  });

  it('runs scheduled syncs until SIGTERM, then exits 0', async () => {
    // A prefix of its own, so that it takes no job of another test's API.
    const env = testEnv({ LOG_LEVEL: 'info', WORKER_CONCURRENCY: '3', REDIS_PREFIX: `${inject('redisPrefix')}_role` });
    const run = runEntry('worker', env);
    await run.waitFor(/"concurrency":3,.*"msg":"worker running"/);
    await scheduleAndAwaitCompletion(loadConfig(env), { paymentId: 'pay_Role1', attemptId: 'att_Role1', step: 0 });
    expect(await run.stop()).toBe(0);
    expect(run.output.stderr).toContain('SIGTERM received, shutting down');
  });
});

describe('the demo command (npm start)', () => {
  const databaseUrl = new URL(inject('databaseUrl'));
  databaseUrl.pathname = `${databaseUrl.pathname}_demo${randomBytes(2).toString('hex')}`;

  afterAll(async () => {
    const server = new URL(databaseUrl);
    server.pathname = '/postgres';
    const client = new pg.Client({ connectionString: server.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(databaseUrl.pathname.slice(1))} WITH (FORCE)`);
    await client.end();
  });

  async function startDemo() {
    const env = testEnv({ DATABASE_URL: databaseUrl.toString() });
    delete env.ADMIN_API_KEY; // as a newcomer runs it
    const run = runEntry('start', env);
    await run.waitFor(/Stop with Ctrl\+C\./);
    const printed = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(run.output.stdout)?.[1];
    return {
      run,
      graphqlUrl: printed('GraphQL API \\+ GraphiQL')!,
      checkoutUrl: printed('Hosted checkout')!,
      dashboardUrl: printed('Live dashboard')!,
      secretKey: printed('secret key')!,
      publishableKey: printed('publishable key')!,
      adminKey: printed('admin key')!,
    };
  }

  it('creates the database, migrates, creates the demo merchant once and prints the same keys on every start', async () => {
    const first = await startDemo();
    expect(first.graphqlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
    expect(first.secretKey).toMatch(/^sk_test_[0-9a-f]{32}$/);
    expect(first.publishableKey).toMatch(/^pk_test_[0-9a-f]{32}$/);
    expect(first.adminKey).toMatch(/^admin_[0-9a-f]{48}$/);
    // The printed admin key creates merchants, as the README's curl line shows.
    const created = await fetch(first.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${first.adminKey}` },
      body: JSON.stringify({ query: 'mutation { createMerchantAccount(input: { name: "Readme" }) { merchant { id } } }' }),
    });
    expect(((await created.json()) as { data: { createMerchantAccount: { merchant: { id: string } } } }).data.createMerchantAccount.merchant.id).toMatch(/^mer_/);
    expect(await first.run.stop()).toBe(0);

    const second = await startDemo();
    try {
      expect(second.secretKey).toBe(first.secretKey);
      expect(second.publishableKey).toBe(first.publishableKey);
      const response = await fetch(second.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': first.secretKey },
        body: JSON.stringify({ query: '{ merchant { id name } }' }),
      });
      expect(await response.json()).toEqual({ data: { merchant: { id: 'mer_DemoMerchant000000000000', name: 'Demo Merchant' } } });
      // The README's card flow: create with the secret key, confirm as the SDK with the publishable key.
      const call = async (key: string, query: string) => {
        const answer = await fetch(second.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: JSON.stringify({ query }) });
        return ((await answer.json()) as { data: Record<string, { id: string; clientSecret: string; status: string }> }).data;
      };
      const { createPayment } = await call(second.secretKey, 'mutation { createPayment(input: { amount: 1000, currency: "USD" }) { id clientSecret status } }');
      const { confirmPayment } = await call(
        second.publishableKey,
        `mutation { confirmPayment(input: { clientSecret: "${createPayment!.clientSecret}", paymentMethodData: { card: { number: "4242424242424242", expiryMonth: 12, expiryYear: 2040, cvc: "123" } } }) { id status } }`,
      );
      expect(confirmPayment).toEqual({ id: createPayment!.id, status: 'SUCCEEDED' });
      // The printed checkout (the demo payment link) and dashboard work with the printed keys.
      expect(second.dashboardUrl).toBe(second.graphqlUrl.replace(/\/graphql$/, `/dashboard#secret_key=${second.secretKey}`));
      const use = await fetch(`${second.checkoutUrl}/payments`, { method: 'POST' });
      expect(use.status).toBe(201);
      expect(await use.json()).toMatchObject({ publishable_key: second.publishableKey, amount: 2000, currency: 'EUR' });
    } finally {
      expect(await second.run.stop()).toBe(0);
    }
  });
});

describe('the sandbox role', () => {
  it('refuses a bad setting with one line', async () => {
    const run = runEntry('sandbox', { SANDBOX_PORT: 'abc' });
    expect(await run.exited).toBe(1);
    expect(run.output.stderr.trim()).toMatch(/^sandbox: error: SANDBOX_PORT: must be an integer from 0 to 65535$/);
  });

  it('serves until SIGTERM, then exits 0', async () => {
    const run = runEntry('sandbox', { SANDBOX_PORT: '0' });
    const [, url] = await run.waitFor(/sandbox listening on (\S+)/);
    expect((await fetch(`${url}/v1/payments/x`)).status).toBe(401);
    expect(await run.stop()).toBe(0);
  });
});
