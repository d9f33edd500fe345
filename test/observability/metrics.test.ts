// Observability against the real API, worker, sandbox processor and a webhook receiver (docs/operations.md,
// "Metrics" and "Logs"; docs/api.md, "Errors"): /metrics of each process after real traffic, error answers'
// request id and docs link, the request (or job) id on log lines written inside services, and the Grafana
// dashboard built only on metrics the processes expose.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/platform/logger.ts';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentEventsDocument, PaymentUpdatedDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { startTestApi } from '../support/api.ts';
import { dataOf, errorOf, graphqlClient } from '../support/graphql-client.ts';
import { answer, startReceiver, type Receiver } from '../support/receiver.ts';
import { closedPort, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { subscribeSse, subscribeWs, wsClient } from '../support/subscriptions.ts';
import { card, declinedPayment, eventReaching, paidPayment, shopWithReceiver, type Shop } from '../support/webhooks.ts';

const DASHBOARD = 'ops/grafana/payments.json';

/** Every line the API and the worker logged, parsed. */
const lines: Record<string, unknown>[] = [];
const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });

let stack: Stack;
let shop: Shop;
const receivers: Receiver[] = [];
beforeAll(async () => {
  // One subscription per key, so a second one is refused (a dropped subscription to count).
  stack = await startStack({ logger, env: { SUBSCRIPTIONS_PER_KEY: '1' } });
  shop = await shopWithReceiver(stack);
  receivers.push(shop.receiver);
});
afterAll(async () => {
  await stack.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

const scrape = async (url: string) => (await fetch(url)).text();
const apiMetrics = () => scrape(`${stack.api.url}/metrics`);
const workerMetrics = () => scrape(stack.workerMetricsUrl!);

/** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) total += Number(match[3]);
  }
  return total;
}

/** How much each of `series` grew while `traffic` ran, as `read` scrapes them. */
async function growth(read: () => Promise<string>, series: [string, Record<string, string>][], traffic: () => Promise<unknown>) {
  const before = await read();
  await traffic();
  const after = await read();
  return series.map(([name, labels]) => sample(after, name, labels) - sample(before, name, labels));
}

describe('GET /metrics after real traffic', () => {
  it('times createPayment and confirmPayment by root field, and the processor call by connector and flow', async () => {
    const counts = await growth(
      apiMetrics,
      [
        ['graphql_operation_duration_seconds_count', { operation: 'createPayment', type: 'mutation' }],
        ['graphql_operation_duration_seconds_count', { operation: 'confirmPayment', type: 'mutation' }],
        ['connector_call_duration_seconds_count', { connector: 'sandbox', flow: 'authorize' }],
        ['connector_calls_total', { connector: 'sandbox', flow: 'authorize', outcome: 'success' }],
        ['graphql_errors_total', {}],
      ],
      () => paidPayment(shop),
    );
    expect(counts).toEqual([1, 1, 1, 1, 0]);
  });

  it('counts a decline by its catalog code, and the answer’s error by operation and code', async () => {
    const counts = await growth(
      apiMetrics,
      [
        ['connector_calls_total', { connector: 'sandbox', flow: 'authorize', outcome: 'declined' }],
        ['connector_declines_total', { connector: 'sandbox', code: 'card_declined' }],
        ['graphql_errors_total', { operation: 'confirmPayment', code: 'PAYMENT_DECLINED' }],
        ['connector_calls_total', { connector: 'sandbox', flow: 'authorize', outcome: 'success' }],
      ],
      () => declinedPayment(shop),
    );
    expect(counts).toEqual([1, 1, 1, 0]);
  });

  it('does not count the CONFLICT of a keyed request that lost its key to another: the key’s answer is what its client gets', async () => {
    const body = JSON.stringify({ query: CreatePaymentDocument.toString(), variables: { input: { amount: 1300, currency: 'USD' } } });
    const headers = { 'content-type': 'application/json', 'api-key': shop.secretKey, 'idempotency-key': `metrics-race-${Date.now()}` };
    const [conflicts] = await growth(apiMetrics, [['graphql_errors_total', { operation: 'createPayment', code: 'CONFLICT' }]], async () => {
      // Eight at once: one takes the key with its insert, the others lose it in theirs and answer with the key's record.
      const answers = await Promise.all(Array.from({ length: 8 }, () => fetch(`${stack.api.url}/graphql`, { method: 'POST', headers, body })));
      const ids = await Promise.all(
        answers.map(async (answer) => ((await answer.json()) as { data?: { createPayment: { id: string } } }).data?.createPayment.id),
      );
      expect(new Set(ids.filter(Boolean)).size).toBe(1);
    });
    expect(conflicts).toBe(0);
  });

  it('labels a query the client named freely by its root field, and one that never parsed as anonymous', async () => {
    const counts = await growth(
      apiMetrics,
      [
        ['graphql_operation_duration_seconds_count', { operation: 'createPayment' }],
        ['graphql_errors_total', { operation: 'anonymous', code: 'INVALID_INPUT' }],
      ],
      async () => {
        const named = await fetch(`${stack.api.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'api-key': shop.secretKey },
          body: JSON.stringify({
            query: 'mutation AnyNameAtAll123 { createPayment(input: { amount: 100, currency: "USD" }) { id } }',
            operationName: 'AnyNameAtAll123',
          }),
        });
        expect(named.status).toBe(200);
        await graphqlClient(stack.api.url, shop.secretKey)({ toString: () => '{ payment(' } as never);
      },
    );
    expect(counts).toEqual([1, 1]);
    expect(await apiMetrics()).not.toContain('AnyNameAtAll123');
  });

  it('counts each webhook POST by outcome class in the worker, and shows the backlog in the API', async () => {
    const delivered = await growth(
      workerMetrics,
      [
        ['webhook_deliveries_total', { outcome: '2xx' }],
        ['webhook_deliveries_total', {}],
        ['webhook_delivery_duration_seconds_count', {}],
      ],
      async () => eventReaching(shop, (await paidPayment(shop)).id, 'PAYMENT_SUCCEEDED', 'DELIVERED'),
    );
    expect(delivered[0]).toBeGreaterThanOrEqual(1);
    // Every POST is counted once by its outcome and timed once, whatever its outcome: on a busy machine another
    // POST of the stack (a kept-alive connection the receiver closed as it was reused, say) may fail meanwhile.
    expect(delivered[2]).toBe(delivered[1]);

    // An endpoint nobody listens at: a network failure, and the event stays pending for its retries.
    const unreachable = await merchantWithSandbox(stack);
    const port = await closedPort();
    dataOf(
      await unreachable.secret(UpdateBusinessProfileDocument, { input: { profileId: unreachable.profileId, webhookUrl: `http://127.0.0.1:${port}/hooks` } }),
    );
    const before = sample(await workerMetrics(), 'webhook_deliveries_total', { outcome: 'network' });
    const payment = await paidPayment(unreachable);
    await vi.waitFor(async () => expect(sample(await workerMetrics(), 'webhook_deliveries_total', { outcome: 'network' })).toBeGreaterThan(before), {
      timeout: 10_000,
      interval: 100,
    });
    await eventReaching(unreachable, payment.id, 'PAYMENT_SUCCEEDED', 'PENDING');
    const api = await apiMetrics();
    expect(sample(api, 'webhook_pending_deliveries')).toBeGreaterThanOrEqual(1);
    expect(sample(api, 'webhook_oldest_pending_age_seconds')).toBeGreaterThan(0);
    // The backlog is the API's to expose: the worker's would count it again.
    expect(await workerMetrics()).not.toContain('webhook_pending_deliveries');
  });

  it('shows connector accounts by circuit state', async () => {
    expect(sample(await apiMetrics(), 'connector_circuit_accounts', { connector: 'sandbox', state: 'closed' })).toBeGreaterThanOrEqual(1);
  });

  it('counts open subscriptions, and a refused one as dropped', async () => {
    const open = () => apiMetrics().then((text) => sample(text, 'graphql_subscriptions_open'));
    const dropped = () => apiMetrics().then((text) => sample(text, 'graphql_subscriptions_dropped_total', { reason: 'refused' }));
    const [openBefore, droppedBefore] = [await open(), await dropped()];
    const first = subscribeSse(stack.api.url, shop.secretKey, PaymentEventsDocument, { profileId: shop.profileId });
    await vi.waitFor(async () => expect(await open()).toBe(openBefore + 1), { timeout: 5_000, interval: 50 });
    const second = subscribeSse(stack.api.url, shop.secretKey, PaymentEventsDocument, { profileId: shop.profileId });
    expect((await second.waitForError()).map((error) => error.extensions?.code)).toEqual(['RATE_LIMITED']);
    expect(await dropped()).toBe(droppedBefore + 1);
    first.close();
    second.close();
    await vi.waitFor(async () => expect(await open()).toBe(openBefore), { timeout: 5_000, interval: 50 });
  });
});

describe('error answers', () => {
  it('carry the request id of the answer’s x-request-id and the link to the code’s row in docs/api.md', async () => {
    const response = await fetch(`${stack.api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': 'sk_test_not_a_key' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = (await response.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.errors[0]!.extensions).toMatchObject({
      code: 'UNAUTHENTICATED',
      requestId: response.headers.get('x-request-id'),
      docs: 'docs/api.md#error-unauthenticated',
    });

    const declined = await confirmDeclined('obs-decline-answer');
    expect(declined.extensions).toMatchObject({ code: 'PAYMENT_DECLINED', requestId: 'obs-decline-answer', docs: 'docs/api.md#error-payment-declined' });

    const rest = await fetch(`${stack.api.url}/nope`, { headers: { 'x-request-id': 'obs-rest-404' } });
    expect(await rest.json()).toEqual({
      error: { code: 'NOT_FOUND', message: expect.any(String), requestId: 'obs-rest-404', docs: 'docs/api.md#error-not-found' },
    });
    // A route's own code has no row in the table to link to.
    const refused = await fetch(`${stack.api.url}/checkout`, { method: 'POST', headers: { 'x-request-id': 'obs-rest-405' } });
    expect(await refused.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: 'Use GET here.', requestId: 'obs-rest-405' } });
  });

  it('refused before GraphQL runs (an Idempotency-Key the service cannot keep, a body that is not JSON) carry them too', async () => {
    const keyed = await fetch(`${stack.api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'obs-key', 'x-request-id': 'obs-keyed' },
      body: JSON.stringify({ query: 'mutation { __typename }' }),
    });
    expect(((await keyed.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).toEqual({
      code: 'UNAUTHENTICATED',
      field: 'Idempotency-Key',
      requestId: 'obs-keyed',
      docs: 'docs/api.md#error-unauthenticated',
    });
    const plainText = await fetch(`${stack.api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'api-key': shop.secretKey, 'x-request-id': 'obs-plain-text' },
      body: '{ __typename }',
    });
    const answer = (await plainText.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect([plainText.status, answer.errors[0]!.extensions]).toEqual([415, expect.objectContaining({ requestId: 'obs-plain-text', docs: expect.any(String) })]);
  });

  it('over WebSocket carry the operation’s request id (refused before it ran too) and the docs link, and are counted', async () => {
    const before = await apiMetrics();
    const unknown = subscribeWs(wsClient(stack.api.url, shop.secretKey), PaymentUpdatedDocument, { paymentId: 'pay_does_not_exist' });
    const [notFound] = await unknown.waitForError();
    expect(notFound!.extensions).toMatchObject({ code: 'NOT_FOUND', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), docs: 'docs/api.md#error-not-found' });
    const refused = subscribeWs(wsClient(stack.api.url, 'sk_test_not_a_key'), PaymentUpdatedDocument, { paymentId: 'pay_does_not_exist' });
    const [unauthenticated] = await refused.waitForError();
    expect(unauthenticated!.extensions).toEqual({
      code: 'UNAUTHENTICATED',
      http: expect.anything(),
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      docs: 'docs/api.md#error-unauthenticated',
    });
    const after = await apiMetrics();
    const grew = (labels: Record<string, string>) => sample(after, 'graphql_errors_total', labels) - sample(before, 'graphql_errors_total', labels);
    expect([grew({ operation: 'paymentUpdated', code: 'NOT_FOUND' }), grew({ operation: 'anonymous', code: 'UNAUTHENTICATED' })]).toEqual([1, 1]);
    unknown.close();
    refused.close();
  });

  it('link under DOCS_BASE_URL when it is set, to an anchor docs/api.md has', async () => {
    const api = await startTestApi({ DOCS_BASE_URL: 'https://docs.example.com/payments/' });
    try {
      const answered = await graphqlClient(api.url, 'sk_test_not_a_key')({ toString: () => '{ __typename }' } as never);
      expect(answered.errors?.[0]?.extensions?.['docs']).toBe('https://docs.example.com/payments/api.md#error-unauthenticated');
    } finally {
      await api.close();
    }
    expect(readFileSync('docs/api.md', 'utf8')).toContain('<a id="error-unauthenticated"></a>`UNAUTHENTICATED`');
  });
});

/** Confirms a payment with the sandbox's declined card, sending `requestId`; returns the answer's error. */
async function confirmDeclined(requestId: string) {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'USD' } })).createPayment;
  const confirmed = await shop.publishable(
    ConfirmPaymentDocument,
    { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000002') } },
    { 'x-request-id': requestId },
  );
  return errorOf(confirmed, 'PAYMENT_DECLINED');
}

describe('log lines', () => {
  it('written by a service during a request carry that request’s id', async () => {
    await confirmDeclined('obs-decline-log');
    const serviceLine = lines.find((line) => line['msg'] === 'attempt failed without retry' && line['requestId'] === 'obs-decline-log');
    expect(serviceLine).toMatchObject({ code: 'card_declined', level: 30 });
    expect(lines.filter((line) => line['requestId'] === 'obs-decline-log').map((line) => line['msg'])).toEqual(
      expect.arrayContaining(['attempt failed without retry', 'request']),
    );
  });

  it('written by a worker job carry its queue and job id (for a webhook, the event id)', async () => {
    const gone = await startReceiver(answer(410));
    receivers.push(gone);
    const goneShop = await shopWithReceiver(stack, gone);
    const payment = await paidPayment(goneShop);
    const event = await eventReaching(goneShop, payment.id, 'PAYMENT_SUCCEEDED', 'NOT_SENT');
    const jobLine = lines.find((line) => line['msg'] === 'webhook endpoint answered 410 Gone and was disabled' && line['eventId'] === event.id);
    expect(jobLine).toMatchObject({ queue: 'webhooks', jobId: event.id });
    expect(jobLine).not.toHaveProperty('requestId');
  });
});

describe(`the Grafana dashboard (${DASHBOARD})`, () => {
  it('queries only metrics the API or the worker exposes', async () => {
    const dashboard = readFileSync(DASHBOARD, 'utf8');
    const expressions = [...dashboard.matchAll(/"(?:expr|query)": "((?:[^"\\]|\\.)*)"/g)].map(([, expression]) => JSON.parse(`"${expression}"`) as string);
    expect(expressions.length).toBeGreaterThan(10);
    const used = new Set(expressions.flatMap((expression) => [...expression.matchAll(/([a-z_:][a-z0-9_:]*)(?=\{|,\s*job\))/g)].map(([, name]) => name!)));
    const exposed = `${await apiMetrics()}\n${await workerMetrics()}`;
    const sampled = new Set(exposed.split('\n').flatMap((line) => (/^([a-zA-Z_:][\w:]*)[{ ]/.exec(line)?.[1] ? [/^([a-zA-Z_:][\w:]*)/.exec(line)![1]!] : [])));
    const missing = [...used].filter((name) => !sampled.has(name));
    expect(missing).toEqual([]);
    expect(used).toContain('webhook_oldest_pending_age_seconds');
  });
});
