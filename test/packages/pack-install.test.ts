// What a merchant does with each published package (docs/sdk.md): `npm pack` it (its prepack builds it), install
// the tarball into an empty project, and use it from plain Node (ESM, and CommonJS), from a bundle esbuild makes
// of a tiny app (run in Chromium for the browser SDK, in Node for the server SDK), and from TypeScript checked
// against the installed declarations; and the tarball runs nothing on install.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePaymentDocument } from '../gql/graphql.ts';
import { eventually, launchBrowser, openPage } from '../support/browser.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { liveChannel, untilLive } from '../support/subscriptions.ts';
import { card, paidPayment, shopWithReceiver, type Shop } from '../support/webhooks.ts';

const REPOSITORY = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(REPOSITORY, 'node_modules/typescript/bin/tsc');
const runFile = promisify(execFile);
// Settings npm hands the scripts it runs (npm_config_*, under `npm test`) would aim the merchant's npm at this
// repository: the merchant's commands run without them.
const merchantEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));

async function run(command: string, args: string[], cwd: string): Promise<string> {
  const { stdout } = await runFile(command, args, { cwd, env: merchantEnv, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** Runs a Node script of the merchant's project; it prints its findings as JSON on its last line. */
async function runNode(cwd: string, script: string, args: string[] = []): Promise<Record<string, unknown>> {
  const lines = (await run(process.execPath, [script, ...args], cwd)).trim().split('\n');
  return JSON.parse(lines.at(-1)!) as Record<string, unknown>;
}

/** The file Node's `require` loads for `name` in the merchant's project (Node 20.19 could require an ES module too). */
const requiredFile = async (cwd: string, name: string) => (await run(process.execPath, ['-p', `require.resolve('${name}')`], cwd)).trim();

interface Packed {
  tarball: string;
  files: string[];
  manifest: { scripts?: Record<string, string>; dependencies?: Record<string, string>; bin?: Record<string, string> };
}

/**
 * What a package's build reads: its own folder (but its build output and installed modules), the client-core it
 * bundles, the shared tsup settings, the kernel code it bundles (src/kernel/cards.ts), the TypeScript settings and
 * the tools' versions (the lockfile).
 */
const buildInputs = (name: 'js' | 'node') =>
  [`packages/${name}`, 'packages/client-core', 'packages/tsup-shared.ts', 'src/kernel', 'tsconfig.json', 'package.json', 'package-lock.json'].map((entry) =>
    path.join(REPOSITORY, entry),
  );

/** A hash of every file of `inputs` (paths and contents), skipping dist/ and node_modules/. */
function contentHash(inputs: string[]): string {
  const hash = createHash('sha256');
  const add = (file: string) => {
    if (statSync(file).isDirectory()) {
      for (const entry of readdirSync(file).sort()) if (entry !== 'dist' && entry !== 'node_modules') add(path.join(file, entry));
    } else
      hash
        .update(`${path.relative(REPOSITORY, file)}\0`)
        .update(readFileSync(file))
        .update('\0');
  };
  inputs.forEach(add);
  return hash.digest('hex');
}

// Packs of the same build inputs are the same tarball: kept between runs (PACK_CACHE_DIR, or beside the
// system's temporary files) so that only a change to a package builds it again; PACK_CACHE=off always builds.
const PACK_CACHE = process.env.PACK_CACHE === 'off' ? null : (process.env.PACK_CACHE_DIR ?? path.join(tmpdir(), 'payments-orchestrator-pack-cache'));

/** `npm pack` in the package's folder, as its publisher would: the prepack script builds it first (or the same inputs' pack, cached). */
async function pack(name: 'js' | 'node', destination: string): Promise<Packed> {
  mkdirSync(destination);
  const cached = PACK_CACHE && path.join(PACK_CACHE, `${name}-${contentHash(buildInputs(name))}.tgz`);
  let tarball: string;
  if (cached && existsSync(cached)) {
    tarball = path.join(destination, path.basename(cached));
    copyFileSync(cached, tarball);
  } else {
    await run('npm', ['pack', '--pack-destination', destination], path.join(REPOSITORY, 'packages', name));
    const [file] = readdirSync(destination).filter((entry) => entry.endsWith('.tgz'));
    tarball = path.join(destination, file!);
    if (cached) {
      // Written aside, then renamed: a run beside this one never reads half a tarball.
      mkdirSync(PACK_CACHE, { recursive: true });
      copyFileSync(tarball, `${cached}.${process.pid}`);
      renameSync(`${cached}.${process.pid}`, cached);
    }
  }
  const files = (await run('tar', ['-tzf', tarball], destination)).trim().split('\n');
  const manifest = JSON.parse(await run('tar', ['-xzOf', tarball, 'package/package.json'], destination)) as Packed['manifest'];
  return { tarball, files, manifest };
}

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall'];

/** No install scripts, the built JavaScript and declarations, nothing outside `allowed`, and nothing private to depend on. */
function expectPublishable(packed: Packed, allowed: RegExp) {
  expect(Object.keys(packed.manifest.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
  expect(packed.files).toEqual(expect.arrayContaining(['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.cjs']));
  expect(packed.files).toEqual(expect.arrayContaining(['package/dist/index.d.ts', 'package/dist/index.d.cts']));
  expect(packed.files.filter((file) => !allowed.test(file))).toEqual([]);
  expect(Object.keys(packed.manifest.dependencies ?? {})).not.toContain('@payments-orchestrator/client-core');
}

/** Type-checks the merchant's files against the installed declarations with this repository's TypeScript. */
async function typeCheck(project: string, name: string, files: Record<string, string>, compilerOptions: Record<string, unknown>) {
  for (const [file, source] of Object.entries(files)) writeFileSync(path.join(project, file), source);
  const config = `tsconfig.${name}.json`;
  writeFileSync(
    path.join(project, config),
    JSON.stringify({
      // skipLibCheck off: the published declarations themselves must type-check.
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        noEmit: true,
        skipLibCheck: false,
        ...compilerOptions,
      },
      files: Object.keys(files),
    }),
  );
  return runFile(process.execPath, [TSC, '-p', config], { cwd: project, env: merchantEnv }).then(
    () => '',
    (error: { stdout: string }) => error.stdout,
  );
}

let stack: Stack;
let shop: Shop;
let work: string;
let merchant: string;
let packed: { js: Packed; node: Packed };

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'pack-install-'));
  merchant = path.join(work, 'shop');
  mkdirSync(merchant);
  writeFileSync(path.join(merchant, 'package.json'), JSON.stringify({ name: 'merchant-shop', version: '1.0.0', private: true }));
  // The two builds one after the other (2 CPUs), beside the stack's start.
  const packing = (async () => ({ js: await pack('js', path.join(work, 'js')), node: await pack('node', path.join(work, 'node')) }))();
  [stack, packed] = await Promise.all([startStack(), packing]);
  shop = await shopWithReceiver(stack);
  // `ws` is the merchant's own choice of WebSocket for the browser SDK in Node (the server SDK brings its own).
  await run('npm', ['install', packed.js.tarball, packed.node.tarball, 'ws', '--prefer-offline', '--no-audit', '--no-fund'], merchant);
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await shop?.receiver.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function newPayment() {
  return dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1999, currency: 'EUR' } })).createPayment;
}

describe('the browser SDK, @payments-orchestrator/js, from its tarball', () => {
  it('packs with no install scripts, its built modules and declarations, and nothing else', () => {
    expectPublishable(packed.js, /^package\/(package\.json|README\.md|LICENSE|dist\/index\.(js|cjs|d\.ts|d\.cts)(\.map)?)$/);
  });

  it('reads the methods, confirms with the sandbox card and streams the update in plain Node (ESM)', async () => {
    writeFileSync(
      path.join(merchant, 'pay.mjs'),
      `import { existsSync } from 'node:fs';
import WebSocket from 'ws';
import { createPaymentsClient } from '@payments-orchestrator/js';
const [baseUrl, publishableKey, clientSecret, card] = process.argv.slice(2);
const payments = createPaymentsClient({ publishableKey, clientSecret, baseUrl, webSocketImpl: WebSocket });
const { methods } = await payments.paymentMethods();
const updates = [];
payments.onUpdate((payment) => updates.push(payment.status));
// The test creates this file once the subscription is in effect at the API.
while (!existsSync('subscribed')) await new Promise((resolve) => setTimeout(resolve, 20));
const paid = await payments.confirm({ paymentMethodData: JSON.parse(card) });
for (let waited = 0; !updates.includes('SUCCEEDED') && waited < 10000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
await payments.close();
console.log(JSON.stringify({ methods: methods.map((method) => method.type), status: paid.status, updates }));
`,
    );
    const payment = await newPayment();
    const ran = runNode(merchant, 'pay.mjs', [stack.api.url, shop.publishableKey, payment.clientSecret, JSON.stringify(card())]);
    ran.catch(() => undefined); // its failure is reported where it is awaited, after untilLive's own
    try {
      await untilLive(stack.env, liveChannel.payment(payment.id));
    } finally {
      writeFileSync(path.join(merchant, 'subscribed'), ''); // the script goes on either way, and ends
    }
    const result = await ran;
    expect(result).toMatchObject({ status: 'SUCCEEDED', updates: expect.arrayContaining(['SUCCEEDED']) });
    expect(result['methods']).toContain('CARD');
  });

  it('loads as CommonJS too', async () => {
    writeFileSync(
      path.join(merchant, 'check.cjs'),
      `const { checkCard, createPaymentsClient, ApiError } = require('@payments-orchestrator/js');
const problem = checkCard({ number: '4242 4242 4242 4241', expiryMonth: 12, expiryYear: 2040, cvc: '123' });
let refused;
try { createPaymentsClient({ publishableKey: 'pk_test', clientSecret: 'no secret', baseUrl: 'http://127.0.0.1:1' }); } catch (error) { refused = error instanceof ApiError && error.field; }
console.log(JSON.stringify({ problem, refused }));
`,
    );
    expect(await runNode(merchant, 'check.cjs')).toEqual({
      problem: { field: 'card.number', message: expect.stringContaining('check digit') },
      refused: 'clientSecret',
    });
    expect(await requiredFile(merchant, '@payments-orchestrator/js')).toBe(path.join(merchant, 'node_modules/@payments-orchestrator/js/dist/index.cjs'));
  });

  describe('bundled by esbuild for browsers', () => {
    let browser: Browser;
    let site: Server;
    afterAll(async () => {
      await browser?.close();
      site?.close();
    });

    it("runs on a merchant's page in Chromium: checks a card, reads the methods and confirms across origins", async () => {
      writeFileSync(
        path.join(merchant, 'checkout.js'),
        `import { checkCard, createPaymentsClient } from '@payments-orchestrator/js';
const { baseUrl, publishableKey, clientSecret, card } = Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
const payments = createPaymentsClient({ publishableKey, clientSecret, baseUrl });
const problem = checkCard({ ...JSON.parse(card).card, cvc: '1' });
const { methods } = await payments.paymentMethods();
const paid = await payments.confirm({ paymentMethodData: JSON.parse(card) });
document.body.dataset.result = JSON.stringify({ problem: problem?.field, methods: methods.map((method) => method.type), status: paid.status });
`,
      );
      const bundle = await build({
        entryPoints: ['checkout.js'],
        absWorkingDir: merchant,
        bundle: true,
        format: 'esm',
        platform: 'browser',
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      // What went in: the installed package's ES module and its one dependency, graphql-ws (with graphql, its peer,
      // which the bundle shakes off), and nothing else: esbuild refuses a Node built-in on this platform.
      const inputs = Object.keys(bundle.metafile.inputs);
      expect(inputs).toContain('node_modules/@payments-orchestrator/js/dist/index.js');
      expect(inputs.filter((input) => !/^(checkout\.js|node_modules\/(@payments-orchestrator\/js|graphql-ws|graphql)\/)/.test(input))).toEqual([]);

      const script = bundle.outputFiles[0]!.text;
      site = createServer((request, reply) => {
        const isScript = request.url === '/checkout.js';
        reply.writeHead(200, { 'content-type': isScript ? 'text/javascript' : 'text/html' });
        reply.end(isScript ? script : '<!doctype html><title>Shop</title><script type="module" src="/checkout.js"></script>');
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      browser = await launchBrowser();
      const { page, consoleErrors } = await openPage(browser, 'desktop');
      const payment = await newPayment();
      const credentials = { baseUrl: stack.api.url, publishableKey: shop.publishableKey, clientSecret: payment.clientSecret, card: JSON.stringify(card()) };
      await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/#${new URLSearchParams(credentials)}`);
      await eventually(() => page.evaluate(() => document.body.dataset['result'] ?? null)).not.toBeNull();
      expect(JSON.parse((await page.evaluate(() => document.body.dataset['result']))!)).toEqual({
        problem: 'card.cvc',
        methods: expect.arrayContaining(['CARD']),
        status: 'SUCCEEDED',
      });
      expect(consoleErrors).toEqual([]);
    });
  });

  it("type-checks a merchant's TypeScript against the installed declarations", async () => {
    const errors = await typeCheck(
      merchant,
      'browser',
      {
        'browser.mts': `import { ApiError, checkCard, createPaymentsClient, type PaymentsClient, type SdkPayment } from '@payments-orchestrator/js';
const payments: PaymentsClient = createPaymentsClient({ publishableKey: 'pk_test', clientSecret: 'pay_1_secret_2', baseUrl: 'https://pay.example.com' });
export const problem: { field: string; message: string } | null = checkCard({ number: '4242424242424242', expiryMonth: 12, expiryYear: 2040, cvc: '123' });
export const amount = async (): Promise<number> => (await payments.payment()).amount;
export const declined = (error: unknown) => error instanceof ApiError && error.code === 'PAYMENT_DECLINED';
// @ts-expect-error the types are real, not any: an amount is a number
export const wrong: string = ({} as SdkPayment).amount;
`,
      },
      { lib: ['es2022', 'dom'], types: [] },
    );
    expect(errors).toBe('');
  });
});

describe('the server SDK, @payments-orchestrator/node, from its tarball', () => {
  it('packs with no install scripts, its built modules, declarations, CLI and schemas, and nothing else', () => {
    expectPublishable(packed.node, /^package\/(package\.json|README\.md|LICENSE|dist\/(index|cli)\.(js|cjs|d\.ts|d\.cts)(\.map)?|schemas\/[\w.-]+\.json)$/);
    expect(packed.node.manifest.bin).toEqual({ payments: 'dist/cli.js' });
  });

  /** The ten lines of docs/sdk.md: a payment created, and a real delivery of the shop's webhook verified (and a forged one refused). */
  const TAKE_PAYMENT = `const [baseUrl, apiKey, signingKey, deliveryFile] = process.argv.slice(2);
const payments = new Payments({ apiKey, baseUrl });
const payment = await payments.payments.create({ amount: 1250, currency: 'USD' });
const delivery = JSON.parse(readFileSync(deliveryFile, 'utf8'));
const event = webhooks.verify(delivery.body, delivery.headers, signingKey);
let forged;
try { webhooks.verify(delivery.body + ' ', delivery.headers, signingKey); } catch (error) { forged = error instanceof ApiError && error.code; }
await payments.close();
console.log(JSON.stringify({ status: payment.status, amount: payment.amount, eventType: event.event_type, forged }));
`;
  const ESM = `import { readFileSync } from 'node:fs';
import { ApiError, Payments, webhooks } from '@payments-orchestrator/node';
${TAKE_PAYMENT}`;
  // CommonJS has no top-level await.
  const COMMONJS = `const { readFileSync } = require('node:fs');
const { ApiError, Payments, webhooks } = require('@payments-orchestrator/node');
(async () => {
${TAKE_PAYMENT}})();
`;

  let delivery: string;
  beforeAll(async () => {
    await paidPayment(shop);
    const [request] = await shop.receiver.waitForRequests(1);
    delivery = path.join(work, 'delivery.json');
    writeFileSync(delivery, JSON.stringify({ body: request!.body.toString('utf8'), headers: request!.headers }));
  });
  const runArgs = () => [stack.api.url, shop.secretKey, shop.paymentResponseHashKey, delivery];
  const taken = { status: 'REQUIRES_PAYMENT_METHOD', amount: 1250, eventType: expect.stringMatching(/^payment_/), forged: 'WEBHOOK_SIGNATURE_INVALID' };

  it('takes a payment and verifies a webhook in plain Node, as ESM and as CommonJS', async () => {
    writeFileSync(path.join(merchant, 'server.mjs'), ESM);
    writeFileSync(path.join(merchant, 'server.cjs'), COMMONJS);
    expect(await runNode(merchant, 'server.mjs', runArgs())).toEqual(taken);
    expect(await runNode(merchant, 'server.cjs', runArgs())).toEqual(taken);
    expect(await requiredFile(merchant, '@payments-orchestrator/node')).toBe(path.join(merchant, 'node_modules/@payments-orchestrator/node/dist/index.cjs'));
  });

  it('does the same bundled by esbuild for Node', async () => {
    // CommonJS output: an ES module bundle cannot hold ws, whose CommonJS requires Node's own modules.
    writeFileSync(path.join(merchant, 'server-app.cjs'), COMMONJS);
    await build({
      entryPoints: ['server-app.cjs'],
      absWorkingDir: merchant,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      outfile: 'bundled/server-app.cjs',
      logLevel: 'silent',
    });
    expect(await runNode(merchant, 'bundled/server-app.cjs', runArgs())).toEqual(taken);
  });

  it('links the `payments` command', async () => {
    expect(await run(path.join(merchant, 'node_modules/.bin/payments'), ['--help'], merchant)).toContain('listen');
  });

  it("type-checks a merchant's TypeScript against the installed declarations, as ESM and as CommonJS", async () => {
    const consumer = `import { ApiError, CardDeclinedError, Payments, webhooks, type Payment, type WebhookEvent } from '@payments-orchestrator/node';
const payments = new Payments({ apiKey: 'sk_test_1', baseUrl: 'http://127.0.0.1:8080' });
export const created: Promise<Payment> = payments.payments.create({ amount: 1250, currency: 'USD' });
export const event: WebhookEvent = webhooks.verify('{}', { 'webhook-id': 'evt_1' }, 'key');
export const eventType: string = event.event_type;
export const declined = (error: unknown) => error instanceof CardDeclinedError && error instanceof ApiError;
// @ts-expect-error the types are real, not any: an amount is a number
export const wrong: string = ({} as Payment).amount;
`;
    const errors = await typeCheck(
      merchant,
      'server',
      { 'server-types.mts': consumer, 'server-types.cts': consumer },
      { lib: ['es2022'], types: ['node'], typeRoots: [path.join(REPOSITORY, 'node_modules/@types')] },
    );
    expect(errors).toBe('');
  });
});
