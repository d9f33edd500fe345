// The entry points as an operator runs them: one clear line and exit code 1 when a dependency is missing
// or configuration is wrong; a clean exit on SIGTERM; the worker running jobs; and the demo command
// creating, migrating and printing the same demo keys on every start.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, inject } from 'vitest';
import { loadConfig } from '../../src/platform/config.ts';
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
    [
      'Redis is unreachable',
      { REDIS_URL: 'redis://127.0.0.1:1' },
      /^api: error: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(.+\); start it with: redis-server/,
    ],
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

it.each([
  ['api', 'api'],
  ['worker', 'worker'],
  ['migrate', 'migrate'],
])('%s refuses to start without ENCRYPTION_KEY, with one line naming it', async (entry, name) => {
  const env = testEnv();
  delete env.ENCRYPTION_KEY;
  const run = runEntry(entry, env);
  expect(await run.exited).toBe(1);
  expect(run.output.stderr.trim()).toMatch(new RegExp(`^${name}: error: ENCRYPTION_KEY: required [^\n]+$`));
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

// Each demo start creates and migrates a database: slow on a busy machine, so these tests get a longer timeout.
describe('the demo command (npm start)', { timeout: 180_000 }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /** A fresh place for a demo's data, as on a new machine: its own database and its own secrets file. */
  function demoDataDir() {
    const databaseUrl = new URL(inject('databaseUrl'));
    databaseUrl.pathname = `${databaseUrl.pathname}_demo${randomBytes(2).toString('hex')}`;
    const directory = mkdtempSync(path.join(tmpdir(), 'demo-'));
    cleanups.push(async () => {
      rmSync(directory, { recursive: true, force: true });
      const server = new URL(databaseUrl);
      server.pathname = '/postgres';
      const client = new pg.Client({ connectionString: server.toString() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(databaseUrl.pathname.slice(1))} WITH (FORCE)`);
      await client.end();
    });
    return { databaseUrl: databaseUrl.toString(), secretsFile: path.join(directory, '.demo', 'secrets.json') };
  }

  function demoEnv(dataDir: ReturnType<typeof demoDataDir>) {
    const env = testEnv({ DATABASE_URL: dataDir.databaseUrl, DEMO_SECRETS_FILE: dataDir.secretsFile });
    // As a newcomer runs it: no keys, no HOST.
    delete env.ADMIN_API_KEY;
    delete env.ENCRYPTION_KEY;
    delete env.HOST;
    return env;
  }

  async function startDemo(dataDir: ReturnType<typeof demoDataDir>) {
    const run = runEntry('start', demoEnv(dataDir));
    await run.waitFor(/Stop with Ctrl\+C\./);
    const printed = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(run.output.stdout)?.[1];
    return {
      run,
      graphqlUrl: printed('GraphQL API \\+ GraphiQL')!,
      checkoutUrl: printed('Hosted checkout')!,
      dashboardUrl: printed('Dashboard')!,
      dashboardEmail: printed('email')!,
      dashboardPassword: printed('password')!,
      secretKey: printed('secret key')!,
      publishableKey: printed('publishable key')!,
      signingKey: printed('webhook signing key')!,
      adminKey: printed('admin key')!,
    };
  }

  const dataDir = demoDataDir();
  /** What the first test's demo printed. */
  let printedKeys: Awaited<ReturnType<typeof startDemo>>;

  it('creates the database, migrates, creates the demo merchant once and prints the same keys on every start', async () => {
    const first = await startDemo(dataDir);
    printedKeys = first;
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
    expect(((await created.json()) as { data: { createMerchantAccount: { merchant: { id: string } } } }).data.createMerchantAccount.merchant.id).toMatch(
      /^mer_/,
    );
    expect(await first.run.stop()).toBe(0);

    const second = await startDemo(dataDir);
    try {
      expect(second.secretKey).toBe(first.secretKey);
      expect(second.publishableKey).toBe(first.publishableKey);
      expect(second.adminKey).toBe(first.adminKey);
      const response = await fetch(second.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': first.secretKey },
        body: JSON.stringify({ query: '{ merchant { id name } }' }),
      });
      expect(await response.json()).toEqual({ data: { merchant: { id: 'mer_DemoMerchant000000000000', name: 'Demo Merchant' } } });
      // The README's card flow: create with the secret key, confirm as the SDK with the publishable key.
      const call = async (key: string, query: string) => {
        const answer = await fetch(second.graphqlUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'api-key': key },
          body: JSON.stringify({ query }),
        });
        return ((await answer.json()) as { data: Record<string, { id: string; clientSecret: string; status: string }> }).data;
      };
      const { createPayment } = await call(second.secretKey, 'mutation { createPayment(input: { amount: 1000, currency: "USD" }) { id clientSecret status } }');
      const { confirmPayment } = await call(
        second.publishableKey,
        `mutation { confirmPayment(input: { clientSecret: "${createPayment!.clientSecret}", paymentMethodData: { card: { number: "4242424242424242", expiryMonth: 12, expiryYear: 2040, cvc: "123" } } }) { id status } }`,
      );
      expect(confirmPayment).toEqual({ id: createPayment!.id, status: 'SUCCEEDED' });
      // The printed checkout (the demo payment link) and dashboard work with the printed keys.
      // The dashboard opens with the printed owner's email and password, the same on every start; no key is in a URL.
      expect(second.dashboardUrl).toBe(second.graphqlUrl.replace(/\/graphql$/, '/dashboard/login'));
      expect([second.dashboardEmail, second.dashboardPassword]).toEqual([first.dashboardEmail, first.dashboardPassword]);
      expect(second.run.output.stdout).not.toContain('secret_key=');
      const signedIn = await fetch(second.dashboardUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: second.dashboardEmail, password: second.dashboardPassword }),
      });
      expect(signedIn.status).toBe(200);
      expect(await signedIn.json()).toMatchObject({ user: { email: 'owner@demo.example', role: 'owner', merchantId: 'mer_DemoMerchant000000000000' } });
      const use = await fetch(`${second.checkoutUrl}/payments`, { method: 'POST' });
      expect(use.status).toBe(201);
      expect(await use.json()).toMatchObject({ publishable_key: second.publishableKey, amount: 2000, currency: 'EUR' });
    } finally {
      expect(await second.run.stop()).toBe(0);
    }
  });

  it('keeps its generated keys in a file only its owner can read, and none is derivable from the repository: another fresh demo gets other keys', async () => {
    expect(statSync(dataDir.secretsFile).mode & 0o777).toBe(0o600);
    const first = printedKeys;
    const other = await startDemo(demoDataDir());
    await other.run.stop();
    for (const key of ['secretKey', 'publishableKey', 'signingKey', 'adminKey', 'dashboardPassword'] as const) {
      expect(other[key], key).toMatch(/\S{32}/);
      expect(other[key], key).not.toBe(first[key]);
    }
  });

  it('refuses with one line when its secrets file is gone but its database remains (the old key cannot read the stored secrets)', async () => {
    rmSync(dataDir.secretsFile);
    const run = runEntry('start', demoEnv(dataDir));
    expect(await run.exited).toBe(1);
    expect(run.output.stderr.trim()).toMatch(
      /^start: error: the demo merchant in this database was created with another ENCRYPTION_KEY, so its stored secrets cannot be read \(was \S+secrets\.json deleted\?\); restore that file, or drop the database \(dropdb \S+\) to start afresh$/,
    );
  });

  it('listens on loopback only unless HOST says otherwise', async () => {
    const demo = await startDemo(demoDataDir());
    try {
      const port = Number(new URL(demo.graphqlUrl).port);
      const outward = Object.values(networkInterfaces())
        .flat()
        .find((entry) => entry && !entry.internal && entry.family === 'IPv4');
      expect(await connects('127.0.0.1', port)).toBe(true);
      // A machine with no outward interface has nothing else to reach it by.
      if (outward) expect(await connects(outward.address, port)).toBe(false);
    } finally {
      await demo.run.stop();
    }
  });

  it('keeps its secrets file out of git', () => {
    expect(execFileSync('git', ['check-ignore', '.demo/secrets.json'], { encoding: 'utf8' }).trim()).toBe('.demo/secrets.json');
  });
});

/** Whether a TCP connection to `host`:`port` is accepted. */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

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
