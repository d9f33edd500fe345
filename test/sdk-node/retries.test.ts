// The server SDK's automatic retries, through a proxy in front of the real API that fails the first tries as
// the test says (a connection dropped before or after the API acted, 503, 429 with Retry-After, an answer
// too slow) and then passes requests through. The SDK's sleep is injected: the delays it asked for are
// asserted exactly, never waited.
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConflictError,
  ConnectionError,
  DEFAULT_TIMEOUT_MS,
  IdempotencyError,
  Payments,
  RateLimitError,
  ServiceUnavailableError,
  type PaymentsOptions,
} from '@payments-orchestrator/node';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let proxy: Receiver;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  shop = await merchantWithSandbox(stack);
  proxy = await startReceiver();
});
afterAll(async () => {
  await proxy?.close();
  await stack?.close();
});

/** Passes the request to the API and its answer back (status, body, x-request-id); resolves when answered. */
async function forward(request: ReceivedRequest, reply: ServerResponse | null): Promise<void> {
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string' && !['host', 'content-length', 'connection'].includes(entry[0]),
    ),
  );
  const response = await fetch(`${stack.api.url}${request.url}`, { method: request.method, headers, body: request.body.toString('utf8') });
  const body = await response.text();
  if (!reply) return;
  reply.writeHead(response.status, {
    'content-type': response.headers.get('content-type') ?? 'application/json',
    'x-request-id': response.headers.get('x-request-id') ?? '',
  });
  reply.end(body);
}

type Failure = (request: ReceivedRequest, reply: ServerResponse) => void;

/** The API as the proxy shows it from now on: the i-th request meets failures[i], and every later one is passed through. */
function failingFirst(...failures: Failure[]) {
  proxy.received.length = 0;
  proxy.handler = (request, reply, index) => {
    const failure = failures[index];
    if (failure) failure(request, reply);
    else void forward(request, reply);
  };
}

/** The connection drops before the request reaches the API. */
const dropBefore: Failure = (_request, reply) => reply.socket?.destroy();
/** The API acts, then the connection drops before its answer arrives: the caller cannot know it ran. */
const dropAfter: Failure = (request, reply) => void forward(request, null).then(() => reply.socket?.destroy());
const graphqlError =
  (status: number, extensions: Record<string, unknown>, headers: Record<string, string> = {}): Failure =>
  (_request, reply) =>
    reply
      .writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_proxy', ...headers })
      .end(JSON.stringify({ errors: [{ message: 'refused by the test proxy', extensions }] }));
const unavailable = graphqlError(503, { code: 'SERVICE_UNAVAILABLE' });
/** The API's answer while the key's first try is still running (docs/api.md, "Keys and headers"). */
const inFlight = graphqlError(409, { code: 'CONFLICT' });
const bodiless503: Failure = (_request, reply) => reply.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');

/** An SDK client through the proxy whose sleeps are recorded (and not waited), jitter at its middle. */
function sdkThroughProxy(options: Partial<PaymentsOptions> = {}) {
  const delays: number[] = [];
  const sdk = new Payments({
    apiKey: shop.secretKey,
    baseUrl: `http://127.0.0.1:${proxy.port}`,
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5,
    ...options,
  });
  return { sdk, delays };
}

const idempotencyKeys = () => proxy.received.map((request) => request.headers['idempotency-key']);

async function paymentsOf(customerId: string) {
  const ids: string[] = [];
  for await (const payment of new Payments({ apiKey: shop.secretKey, baseUrl: stack.api.url }).payments.list({ customerId })) ids.push(payment.id);
  return ids;
}

describe('the server SDK’s retries', () => {
  it.each([
    ['dropped before it reached the API', dropBefore],
    ['dropped after the API created the payment', dropAfter],
    ['answered 503 SERVICE_UNAVAILABLE', unavailable],
    ['answered 503 without a GraphQL body', bodiless503],
  ])('retry a mutation whose connection was %s under the same Idempotency-Key, creating one payment', async (_case, failure) => {
    failingFirst(failure);
    const { sdk, delays } = sdkThroughProxy();
    const customerId = `cus_retry_${proxy.port}_${Date.now()}`;
    const payment = await sdk.payments.create({ amount: 1500, currency: 'EUR', customerId });
    const keys = idempotencyKeys();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(await paymentsOf(customerId)).toEqual([payment.id]);
    expect(delays).toEqual([500]);
  });

  it('back off exponentially with jitter (Stripe’s policy), give up after maxRetries, and send a new key per call', async () => {
    failingFirst(unavailable, unavailable, unavailable);
    const { sdk, delays } = sdkThroughProxy({ random: () => 0.75 });
    const refused = await sdk.payments.create({ amount: 1500, currency: 'EUR' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect(refused).toMatchObject({ httpStatus: 503, requestId: 'req_proxy' });
    // Retry n waits min(0.5 s × 2^(n-1), 5 s) × (1 + random) / 2, at least 0.5 s.
    expect(delays).toEqual([500, 875]);
    expect(new Set(idempotencyKeys()).size).toBe(1);
    const created = await sdk.payments.create({ amount: 1500, currency: 'EUR' });
    expect(created.status).toBe('REQUIRES_PAYMENT_METHOD');
    expect(new Set(idempotencyKeys()).size).toBe(2);
  });

  it('wait exactly what RATE_LIMITED’s Retry-After asks (header, else extension), and leave a wait over 60 s to the caller', async () => {
    failingFirst(
      graphqlError(429, { code: 'RATE_LIMITED', retryAfterSeconds: 1 }, { 'retry-after': '7' }),
      graphqlError(429, { code: 'RATE_LIMITED', retryAfterSeconds: 3 }),
    );
    const { sdk, delays } = sdkThroughProxy();
    await sdk.payments.create({ amount: 1500, currency: 'EUR' });
    expect(delays).toEqual([7_000, 3_000]);

    failingFirst(graphqlError(429, { code: 'RATE_LIMITED' }, { 'retry-after': '120' }));
    const patient = sdkThroughProxy();
    const limited = await patient.sdk.payments.create({ amount: 1500, currency: 'EUR' }).catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ retryAfterSeconds: 120, httpStatus: 429 });
    expect(patient.delays).toEqual([]);
  });

  it.each([
    ['CONFLICT', 409, 1],
    ['SERVICE_UNAVAILABLE', 503, 1],
    ['PAYMENT_DECLINED', 402, 0],
    ['INVALID_INPUT', 400, 0],
    ['IDEMPOTENCY_MISMATCH', 422, 0],
    ['INTERNAL', 500, 0],
  ])('after %s (HTTP %i), retry %i times', async (code, status, retries) => {
    failingFirst(graphqlError(status, { code }));
    const { sdk, delays } = sdkThroughProxy();
    const outcome = await sdk.payments.create({ amount: 1500, currency: 'EUR' }).catch((error: unknown) => error);
    expect(proxy.received).toHaveLength(1 + retries);
    expect(delays).toHaveLength(retries);
    if (retries === 0) expect(outcome).toMatchObject({ code, httpStatus: status });
    else expect(outcome).toMatchObject({ status: 'REQUIRES_PAYMENT_METHOD' });
  });

  it('retry queries without an Idempotency-Key', async () => {
    const { sdk } = sdkThroughProxy();
    failingFirst();
    const created = await sdk.payments.create({ amount: 1500, currency: 'EUR' });
    failingFirst(dropBefore);
    expect((await sdk.payments.retrieve(created.id)).id).toBe(created.id);
    expect(proxy.received).toHaveLength(2);
    expect(idempotencyKeys()).toEqual([undefined, undefined]);
  });

  it('count an answer slower than timeoutMs as a connection error, and retry it', async () => {
    const never: Failure = () => undefined;
    failingFirst(never, never);
    const { sdk, delays } = sdkThroughProxy({ timeoutMs: 300, maxRetries: 1 });
    const timedOut = await sdk.payments.create({ amount: 1500, currency: 'EUR' }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(ConnectionError);
    expect(timedOut).toMatchObject({
      code: 'CONNECTION_ERROR',
      message: expect.stringMatching(/300 ms/),
      httpStatus: undefined,
      idempotencyKey: idempotencyKeys()[0],
    });
    expect(delays).toEqual([500]);
    expect(proxy.received).toHaveLength(2);
  });

  it('after a try without an answer, end tries refused CONFLICT as a ConnectionError whose key repeats the call to its outcome', async () => {
    failingFirst(dropAfter, inFlight, inFlight);
    const { sdk, delays } = sdkThroughProxy();
    const customerId = `cus_unknown_${proxy.port}_${Date.now()}`;
    const unknown = await sdk.payments.create({ amount: 1500, currency: 'EUR', customerId }).catch((error: unknown) => error);
    const [key] = idempotencyKeys();
    expect(idempotencyKeys()).toEqual([key, key, key]);
    expect(delays).toEqual([500, 750]);
    expect(unknown).toBeInstanceOf(ConnectionError);
    expect(unknown).toMatchObject({
      code: 'CONNECTION_ERROR',
      idempotencyKey: key,
      message:
        'A try of this mutation got no answer and no later try settled it (the last: refused by the test proxy), so its outcome is unknown: ' +
        'repeat it with the same Idempotency-Key (error.idempotencyKey) to get its outcome (if the service says that is unknown, look the object up before using a new key).',
      cause: expect.any(ConflictError),
    });
    expect(JSON.stringify({ ...(unknown as object), message: (unknown as Error).message })).not.toContain(shop.secretKey);
    const [paymentId] = await paymentsOf(customerId);
    expect((await sdk.payments.create({ amount: 1500, currency: 'EUR', customerId }, { idempotencyKey: String(key) })).id).toBe(paymentId);
  });

  it('with every try answered, CONFLICT stays a ConflictError (nothing ran under the key but what answered)', async () => {
    failingFirst(inFlight, inFlight, inFlight);
    const { sdk } = sdkThroughProxy();
    const refused = await sdk.payments.create({ amount: 1500, currency: 'EUR' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(proxy.received).toHaveLength(3);
  });

  it('wait long enough by default for a confirm failing over across every processor call a profile allows', () => {
    // 1 + maxRetries (at most 5) processor calls of CONNECTOR_TIMEOUT_MS (15 s by default) each.
    expect(DEFAULT_TIMEOUT_MS).toBeGreaterThan(6 * 15_000);
  });

  it('send the caller’s Idempotency-Key, and raise IdempotencyError when it is reused with another input', async () => {
    failingFirst();
    const { sdk } = sdkThroughProxy();
    const idempotencyKey = `order-${Date.now()}`;
    const first = await sdk.payments.create({ amount: 1500, currency: 'EUR' }, { idempotencyKey });
    expect(await sdk.payments.create({ amount: 1500, currency: 'EUR' }, { idempotencyKey })).toMatchObject({ id: first.id });
    expect(idempotencyKeys()).toEqual([idempotencyKey, idempotencyKey]);
    const mismatch = await sdk.payments.create({ amount: 9999, currency: 'EUR' }, { idempotencyKey }).catch((error: unknown) => error);
    expect(mismatch).toBeInstanceOf(IdempotencyError);
    expect(mismatch).toMatchObject({ code: 'IDEMPOTENCY_MISMATCH', httpStatus: 422, requestId: expect.any(String) });
  });

  it('never follow a redirect: the API key stays with the API, and the answer is an error', async () => {
    const elsewhere = await startReceiver();
    try {
      proxy.handler = (_request, reply) => reply.writeHead(307, { location: `${elsewhere.url}/graphql` }).end();
      const { sdk } = sdkThroughProxy({ maxRetries: 0 });
      const refused = await sdk.payments.create({ amount: 1500, currency: 'EUR' }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ httpStatus: 307 });
      expect(elsewhere.received).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });
});
