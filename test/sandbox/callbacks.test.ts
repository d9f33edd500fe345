// The sandbox personality's callbacks over real HTTP: a key registers its endpoint, and every asynchronous
// status change of its payments (a debit settling, a transfer funded or expired, the customer on a challenge
// or bank page) reaches a local receiver, signed, with the payment exactly as GET answers it, retried on the
// server's delays. The signature is checked here with an HMAC computed independently of the sandbox's code.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadSandboxConfig } from '../../sandbox/src/config.ts';
import { startSandbox } from '../../sandbox/src/server.ts';
import { METHOD_DETAILS, methodInput, newFauxpayKey, newKey, useSandbox, type Body } from './harness.ts';

// Short retry delays, so a retried callback takes milliseconds.
const RETRY_DELAYS_MS = [50, 100];
const { call, create, createWith, get, capture, cancel, browser, challenged } = useSandbox({ callbackRetryDelaysMs: RETRY_DELAYS_MS });

const SECRET = 'whsec_sandbox_test_0123456789';
/** Long enough for a callback that would be sent to have arrived (they start at once, on localhost). */
const QUIET_MS = 150;

interface Received {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingHttpHeaders;
  raw: string;
}

interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

interface Callback {
  id: string;
  type: string;
  created: number;
  data: { object: Body };
}

interface DeliveryView {
  event_id: string;
  type: string;
  object_id: string;
  payment_id: string;
  url: string;
  attempts: number;
  last_status: number | null;
  delivered: boolean;
}

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

/** A merchant's callback endpoint on this machine: records every request, answers `statuses` in turn, then 200. */
async function startReceiver(statuses: number[] = []): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((request, reply) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method, path: request.url, headers: request.headers, raw: Buffer.concat(chunks).toString('utf8') });
      reply.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/callbacks`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  receivers.push(receiver);
  return receiver;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const register = (key: string, url: string, secret = SECRET, prefix = '/v1', base?: string) =>
  call('POST', `${prefix}/webhook_endpoints`, { key, body: { url, secret }, ...(base === undefined ? {} : { base }) });

async function deliveries(key: string, base?: string): Promise<DeliveryView[]> {
  const answer = await call('GET', '/v1/webhook_deliveries', { key, ...(base === undefined ? {} : { base }) });
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.text) as { data: DeliveryView[] }).data;
}

/** A new key with its endpoint registered at a new receiver. */
async function registered(statuses: number[] = []): Promise<{ key: string; receiver: Receiver }> {
  const key = newKey();
  const receiver = await startReceiver(statuses);
  expect((await register(key, receiver.url)).status).toBe(200);
  return { key, receiver };
}

/** Waits until `receiver` has had `count` requests. */
async function receivedCount(receiver: Receiver, count: number): Promise<void> {
  await vi.waitFor(() => expect(receiver.received).toHaveLength(count), { timeout: 3000, interval: 10 });
}

/**
 * The callback in `received`, after checking its request as the contract says: a JSON POST whose
 * sandbox-signature is `t=<now in unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>`.
 */
function verified(received: Received, secret = SECRET): Callback {
  expect(received.method).toBe('POST');
  expect(received.path).toBe('/callbacks');
  expect(received.headers['content-type']).toBe('application/json');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(received.headers['sandbox-signature']));
  expect(match, String(received.headers['sandbox-signature'])).not.toBeNull();
  const [, timestamp, signature] = match!;
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(5);
  expect(signature).toBe(createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${received.raw}`).digest('hex'));
  const callback = JSON.parse(received.raw) as Callback;
  expect(Object.keys(callback)).toEqual(['id', 'type', 'created', 'data']);
  expect(callback.id).toMatch(/^evt_sbx_[A-Za-z0-9]+$/);
  expect(Number.isInteger(callback.created) && Math.abs(callback.created - Date.now() / 1000) < 5).toBe(true);
  expect(Object.keys(callback.data)).toEqual(['object']);
  return callback;
}

/** Checks that the callback's payment is exactly what GET answers for it now. */
async function matchesGet(key: string, callback: Callback): Promise<void> {
  const fetched = await get(key, callback.data.object.id);
  expect(fetched.status).toBe(200);
  expect(callback.data.object).toEqual(fetched.body);
  expect(callback.type).toBe(`payment.${fetched.body.status}`);
}

const helper = (key: string, id: string, operation: 'fund' | 'expire') => call('POST', `/v1/test_helpers/payments/${id}/${operation}`, { key });

async function awaitingFunds(key: string, type: 'bank_transfer' | 'crypto' = 'bank_transfer'): Promise<Body> {
  const created = await createWith(key, METHOD_DETAILS[type]);
  expect(created.body.status).toBe('requires_customer_action');
  return created.body;
}

describe('registering an endpoint', () => {
  it('answers the endpoint without its secret; GET lists it; registering again replaces it', async () => {
    const key = newKey();
    expect(JSON.parse((await call('GET', '/v1/webhook_endpoints', { key })).text)).toEqual({ data: [] });
    const first = await register(key, 'https://shop.example/psp/callbacks');
    expect(first.status).toBe(200);
    const endpoint = JSON.parse(first.text) as { id: string; url: string; created: number };
    expect(Object.keys(endpoint).sort()).toEqual(['created', 'id', 'url']);
    expect(endpoint.id).toMatch(/^we_[A-Za-z0-9]+$/);
    expect(endpoint.url).toBe('https://shop.example/psp/callbacks');
    expect(Math.abs(endpoint.created - Date.now() / 1000)).toBeLessThan(5);
    expect(JSON.parse((await call('GET', '/v1/webhook_endpoints', { key })).text)).toEqual({ data: [endpoint] });

    const second = await register(key, 'http://127.0.0.1:9/other', 'another secret, 16+ long');
    const replacement = JSON.parse(second.text) as { id: string };
    expect(replacement.id).not.toBe(endpoint.id);
    expect(JSON.parse((await call('GET', '/v1/webhook_endpoints', { key })).text)).toEqual({ data: [replacement] });
    // Another key has its own (none).
    expect(JSON.parse((await call('GET', '/v1/webhook_endpoints', { key: newKey() })).text)).toEqual({ data: [] });
  });

  it('accepts a URL of exactly 2048 characters and secrets of 16 and 256 characters', async () => {
    const url = `https://shop.example/${'a'.repeat(2048 - 'https://shop.example/'.length)}`;
    expect((await register(newKey(), url, 's'.repeat(16))).status).toBe(200);
    expect((await register(newKey(), 'http://shop.example/cb', 's'.repeat(256))).status).toBe(200);
  });

  it.each<[string, Record<string, unknown>]>([
    ['url', { secret: SECRET }],
    ['url', { url: 42, secret: SECRET }],
    ['url', { url: '/callbacks', secret: SECRET }],
    ['url', { url: 'ftp://shop.example/callbacks', secret: SECRET }],
    ['url', { url: `https://shop.example/${'a'.repeat(2028)}`, secret: SECRET }],
    ['secret', { url: 'https://shop.example/cb' }],
    ['secret', { url: 'https://shop.example/cb', secret: 's'.repeat(15) }],
    ['secret', { url: 'https://shop.example/cb', secret: 's'.repeat(257) }],
    ['events', { url: 'https://shop.example/cb', secret: SECRET, events: ['payment.succeeded'] }],
  ])('refuses a bad %s with 400 invalid_request naming it', async (field, body) => {
    const key = newKey();
    const answer = await call('POST', '/v1/webhook_endpoints', { key, body });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message.startsWith(`${field} `), answer.body.error?.message).toBe(true);
    expect(JSON.parse((await call('GET', '/v1/webhook_endpoints', { key })).text)).toEqual({ data: [] });
  });

  it('needs a secret key', async () => {
    for (const path of ['/v1/webhook_endpoints', '/v1/webhook_deliveries']) {
      const answer = await call('GET', path, { key: null });
      expect(answer.status).toBe(401);
      expect(answer.body.error?.code).toBe('invalid_api_key');
    }
  });

  it('is refused by fauxpay, which has no webhooks, with 404 webhooks_not_supported', async () => {
    const key = newFauxpayKey();
    const refused = { error: { code: 'webhooks_not_supported', message: 'This processor has no webhooks; sync payments instead.' } };
    for (const answer of [
      await register(key, 'https://shop.example/cb', SECRET, '/fauxpay/v1'),
      await call('GET', '/fauxpay/v1/webhook_endpoints', { key }),
      await call('GET', '/fauxpay/v1/webhook_deliveries', { key }),
    ]) {
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.text)).toEqual(refused);
    }
  });
});

describe('callbacks', () => {
  it.each<[string, 'challenge' | 'bank', string, Record<string, unknown>, string]>([
    ['a completed 3D Secure challenge', 'challenge', 'complete', {}, 'payment.succeeded'],
    ['a completed 3D Secure challenge of a manual capture', 'challenge', 'complete', { capture_method: 'manual' }, 'payment.requires_capture'],
    ['a failed 3D Secure challenge', 'challenge', 'fail', {}, 'payment.failed'],
    ['an authorized bank redirect', 'bank', 'authorize', {}, 'payment.succeeded'],
    ['a failed bank redirect', 'bank', 'fail', {}, 'payment.failed'],
  ])('sends %s, signed, with the payment as GET answers it', async (_label, page, action, overrides, type) => {
    const { key, receiver } = await registered();
    const created = page === 'challenge' ? await challenged(key, overrides) : (await createWith(key, METHOD_DETAILS.bank_redirect, overrides)).body;
    // Opening the page (the challenge's device-data step) is not an outcome: no callback for it.
    expect((await browser('GET', `/${page}/${created.id}`)).status).toBe(200);
    expect((await browser('POST', `/${page}/${created.id}/${action}`)).status).toBe(303);
    await receivedCount(receiver, 1);
    const callback = verified(receiver.received[0]!);
    expect(callback.type).toBe(type);
    expect(callback.data.object.id).toBe(created.id);
    await matchesGet(key, callback);
    const [delivery] = await deliveries(key);
    expect(delivery).toEqual({
      event_id: callback.id,
      type,
      object_id: created.id,
      payment_id: created.id,
      url: receiver.url,
      attempts: 1,
      last_status: 200,
      delivered: true,
    });
  });

  it('sends the same payment bytes GET answers, inside the event', async () => {
    const { key, receiver } = await registered();
    const created = await awaitingFunds(key);
    await helper(key, created.id, 'fund');
    await receivedCount(receiver, 1);
    const fetched = await get(key, created.id);
    expect(receiver.received[0]!.raw.endsWith(`,"data":{"object":${fetched.text}}}`)).toBe(true);
  });

  it.each<['bank_transfer' | 'crypto', 'fund' | 'expire', string]>([
    ['bank_transfer', 'fund', 'payment.succeeded'],
    ['bank_transfer', 'expire', 'payment.failed'],
    ['crypto', 'fund', 'payment.succeeded'],
    ['crypto', 'expire', 'payment.failed'],
  ])('sends a %s payment %sed with the test helper as %s', async (type, operation, eventType) => {
    const { key, receiver } = await registered();
    const created = await awaitingFunds(key, type);
    // The customer saying the money is sent does not decide the payment: no callback for it.
    expect((await browser('POST', `/instructions/${created.id}/sent`)).status).toBe(303);
    expect((await helper(key, created.id, operation)).status).toBe(200);
    await receivedCount(receiver, 1);
    const callback = verified(receiver.received[0]!);
    expect(callback.type).toBe(eventType);
    expect(callback.data.object).toMatchObject({ id: created.id, payment_method_type: type, status: eventType.slice('payment.'.length) });
    await matchesGet(key, callback);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(1);
  });

  it.each([
    ['DE89370400440532013000', 'payment.succeeded'],
    ['DE62370400440532013001', 'payment.failed'],
  ])('sends a debit from %s settling (%s) with no read at all, and only once', async (iban, type) => {
    const { key, receiver } = await registered();
    const bankDebit = { ...METHOD_DETAILS.bank_debit, bank_debit: { ...METHOD_DETAILS.bank_debit.bank_debit, iban } };
    const created = await createWith(key, bankDebit, {}, { 'x-sandbox-settle-ms': '50' });
    expect(created.body.status).toBe('processing');
    await receivedCount(receiver, 1);
    const callback = verified(receiver.received[0]!);
    expect(callback.type).toBe(type);
    expect(callback.data.object).toMatchObject({ id: created.body.id, status: type.slice('payment.'.length), bank_debit: { last4: iban.slice(-4) } });
    expect(callback.data.object.updated_ms).toBeGreaterThanOrEqual(created.body.created * 1000 + 50);
    await matchesGet(key, callback);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(1);
    expect(await deliveries(key)).toHaveLength(1);
  });

  it('sends a debit settled by a read before its timer once, from the read', async () => {
    const { key, receiver } = await registered();
    const started = Date.now();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(started);
      const created = await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '60000' });
      vi.setSystemTime(started + 60_000);
      expect((await get(key, created.body.id)).body.status).toBe('succeeded');
    } finally {
      vi.useRealTimers();
    }
    await receivedCount(receiver, 1);
    expect(JSON.parse(receiver.received[0]!.raw)).toMatchObject({ type: 'payment.succeeded' });
  });

  it("sends nothing for the synchronous answers of create, capture and cancel, nor for a key's page views", async () => {
    const { key, receiver } = await registered();
    expect((await create(key)).body.status).toBe('succeeded');
    expect((await create(key, { reference: 'att_declined' }, { number: '4000000000000002' })).status).toBe(402);
    const held = await create(key, { capture_method: 'manual' });
    expect((await capture(key, held.body.id)).body.status).toBe('succeeded');
    const other = await create(key, { capture_method: 'manual' });
    expect((await cancel(key, other.body.id)).body.status).toBe('canceled');
    const challenge = await challenged(key);
    expect((await browser('GET', `/challenge/${challenge.id}`)).status).toBe(200);
    expect((await cancel(key, challenge.id)).body.status).toBe('canceled');
    await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '600000' });
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
    expect(await deliveries(key)).toEqual([]);
  });

  it('sends nothing for a key without an endpoint, even while another key has one', async () => {
    const { receiver } = await registered();
    const key = newKey();
    const created = await awaitingFunds(key);
    expect((await helper(key, created.id, 'fund')).body.status).toBe('succeeded');
    await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '0' });
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
    expect(await deliveries(key)).toEqual([]);
  });

  it('sends the changes after a re-registration to the new endpoint only', async () => {
    const { key, receiver: before } = await registered();
    const first = await awaitingFunds(key);
    await helper(key, first.id, 'fund');
    await receivedCount(before, 1);

    const after = await startReceiver();
    const newSecret = 'the replacement secret';
    expect((await register(key, after.url, newSecret)).status).toBe(200);
    const second = await awaitingFunds(key);
    await helper(key, second.id, 'fund');
    await receivedCount(after, 1);
    expect(verified(after.received[0]!, newSecret).data.object.id).toBe(second.id);
    await sleep(QUIET_MS);
    expect(before.received).toHaveLength(1);
    expect(after.received).toHaveLength(1);
    // Newest first, each with the endpoint it went to.
    expect((await deliveries(key)).map(({ payment_id, url }) => ({ payment_id, url }))).toEqual([
      { payment_id: second.id, url: after.url },
      { payment_id: first.id, url: before.url },
    ]);
  });
});

describe('retries', () => {
  it('retries an answer of 500 after the first delay; once answered 200, sends no more', async () => {
    const { key, receiver } = await registered([500]);
    const created = await awaitingFunds(key);
    await helper(key, created.id, 'fund');
    await receivedCount(receiver, 2);
    const [first, second] = receiver.received as [Received, Received];
    // The same event, byte for byte; each attempt signed afresh.
    expect(second.raw).toBe(first.raw);
    verified(first);
    verified(second);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(2);
    const [delivery] = await deliveries(key);
    expect(delivery).toMatchObject({ payment_id: created.id, type: 'payment.succeeded', attempts: 2, last_status: 200, delivered: true });
  });

  it.each<[string, () => Promise<{ url: string; received: Received[] }>, number | null]>([
    ['an endpoint that always answers 500', () => startReceiver([500, 500, 500, 500]), 500],
    [
      'an endpoint that refuses connections',
      async () => {
        const closed = await startReceiver();
        await closed.close();
        return closed;
      },
      null,
    ],
  ])('gives up on %s after one attempt per delay and one more, with a log line', async (_label, endpoint, lastStatus) => {
    const errors = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const key = newKey();
      const target = await endpoint();
      await register(key, target.url);
      const created = await awaitingFunds(key);
      await helper(key, created.id, 'expire');
      const attempts = RETRY_DELAYS_MS.length + 1;
      await vi.waitFor(async () => expect((await deliveries(key))[0]?.attempts).toBe(attempts), { timeout: 3000, interval: 20 });
      await sleep(QUIET_MS);
      const [delivery] = await deliveries(key);
      expect(delivery).toMatchObject({ type: 'payment.failed', attempts, last_status: lastStatus, delivered: false });
      if (lastStatus !== null) expect(target.received).toHaveLength(attempts);
      const logged = errors.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(delivery!.event_id));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(/^sandbox: gave up callback evt_sbx_\S+ \(payment\.failed\) to http:\/\/127\.0\.0\.1:\d+\/callbacks after 3 attempts/);
    } finally {
      errors.mockRestore();
    }
  });

  it('stops with the server: close() cancels pending retries and settlements', async () => {
    const sandbox = await startSandbox({ port: 0, callbackRetryDelaysMs: [500] });
    const receiver = await startReceiver([500]);
    const key = newKey();
    try {
      await register(key, receiver.url, SECRET, '/v1', sandbox.url);
      await call('POST', '/v1/payments', { key, base: sandbox.url, body: methodInput(METHOD_DETAILS.bank_debit), headers: { 'x-sandbox-settle-ms': '500' } });
      const created = await call('POST', '/v1/payments', { key, base: sandbox.url, body: methodInput(METHOD_DETAILS.bank_transfer) });
      await call('POST', `/v1/test_helpers/payments/${created.body.id}/fund`, { key, base: sandbox.url });
      await receivedCount(receiver, 1);
    } finally {
      await sandbox.close();
    }
    // Past the retry's and the settlement's moment.
    await sleep(600);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('SANDBOX_CALLBACK_RETRY_DELAYS_MS', () => {
  it('is a comma-separated list of delays in ms; unset, the server keeps its default', () => {
    expect(loadSandboxConfig({ SANDBOX_CALLBACK_RETRY_DELAYS_MS: '1000, 5000,0' }).SANDBOX_CALLBACK_RETRY_DELAYS_MS).toEqual([1000, 5000, 0]);
    expect(loadSandboxConfig({}).SANDBOX_CALLBACK_RETRY_DELAYS_MS).toBeUndefined();
  });

  it.each(['soon', '1000,', '-1', '1.5', '3600001', Array(21).fill('1').join(',')])('refuses %s, naming the variable', (value) => {
    expect(() => loadSandboxConfig({ SANDBOX_CALLBACK_RETRY_DELAYS_MS: value })).toThrow(/^SANDBOX_CALLBACK_RETRY_DELAYS_MS: must be a comma-separated list/);
  });
});
