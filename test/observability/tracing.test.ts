// Traces (docs/operations.md, "Tracing"): one payment, from the GraphQL operation in the API process to the
// webhook POST in the worker process, is one trace at a real OTLP/HTTP receiver; without
// OTEL_EXPORTER_OTLP_ENDPOINT nothing is traced.
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import pg from 'pg';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deferredCleanups } from '../support/cleanups.ts';
import { startOtlpReceiver, SPAN_KIND, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { startProcessStack, type ProcessStack } from '../support/process-stack.ts';
import { eventReaching, paidPayment, settlingPayment, shopWithReceiver, type Shop } from '../support/webhooks.ts';
import { EventDeliveryHeadersDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startReceiver } from '../support/receiver.ts';
import { sandboxSignature } from '../support/sandbox-signature.ts';
import { merchantWithSandbox } from '../support/stack.ts';
import { startTracing, tracingEnabled } from '../../src/platform/tracing.ts';
import { queues } from '../../src/platform/queues/registry.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { testEnv } from '../support/api.ts';

/** The chain of spans from `span` up to its trace's root, `span` first, as far as `spans` has them. */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain = [span];
  for (
    let parent = spans.find((candidate) => candidate.spanId === span.parentSpanId);
    parent;
    parent = spans.find((candidate) => candidate.spanId === parent!.parentSpanId)
  )
    chain.push(parent);
  return chain;
}

/** The traceparent among the headers `payments listen` forwards `eventId` with (Event.deliveryHeaders). */
const listenHeader = async (shop: Pick<Shop, 'secret'>, eventId: string) =>
  dataOf(await shop.secret(EventDeliveryHeadersDocument, { id: eventId })).event!.deliveryHeaders.find((header) => header.name === 'traceparent')?.value;

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  const defer = deferredCleanups((run) => afterAll(run, 120_000));
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let stack: ProcessStack;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    defer(otlp.close);
    // Spans are exported every 50 ms, so the test waits for them, not for a batch timer of seconds.
    // The sandbox settles bank debits at once, and the worker's first sync of one waits 15 s: a callback moves it first.
    stack = await startProcessStack({
      workers: 1,
      sandbox: { bankDebitSettleMs: 1 },
      // Webhook retries on the seed's own schedule (the first a minute away), so a test can take a retry's job away.
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', PAYMENT_SYNC_DELAY_SCALE: '1', WEBHOOK_RETRY_DELAY_SCALE: '1' },
    });
    defer(stack.close);
  });

  it('follows a payment from its GraphQL operation through SQL, the processor, the queue and the worker to the webhook POST, in one trace', async () => {
    const shop = await shopWithReceiver(stack);
    const payment = await paidPayment(shop);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    const [delivery] = shop.receiver.received;

    // Each process exports its spans in its own batches, and a parent ends after its children: wait until the
    // whole trace has arrived, asserting its shape each time, rather than for any one span.
    const { posted, operation, request } = await vi.waitFor(
      () => {
        const posted = otlp.spans.find(
          (candidate) =>
            candidate.service === 'payments-worker' &&
            candidate.kind === SPAN_KIND.client &&
            String(candidate.attributes['url.full']).startsWith(shop.receiver.url),
        );
        expect(posted).toBeDefined();
        const traceSpans = otlp.spans.filter((span) => span.traceId === posted!.traceId);
        const named = (name: string) => traceSpans.filter((span) => span.name === name);

        // The API: the request's server span, its operation span, the SQL and the processor call under it, and the enqueue.
        const [operation] = named('mutation ConfirmPayment');
        expect(operation?.service).toBe('payments-api');
        expect(operation?.attributes['graphql.operation.name']).toBe('ConfirmPayment');
        const request = traceSpans.find((span) => span.spanId === operation!.parentSpanId);
        expect(request).toMatchObject({ service: 'payments-api', kind: SPAN_KIND.server });
        expect(request!.parentSpanId).toBe('');
        const under = (root: ReceivedSpan) => traceSpans.filter((span) => span !== root && ancestry(traceSpans, span).includes(root));
        const inOperation = under(operation!);
        expect(
          inOperation.filter((span) => span.attributes['db.system.name'] === 'postgresql' || span.attributes['db.system'] === 'postgresql').length,
        ).toBeGreaterThan(0);
        expect(inOperation.filter((span) => span.kind === SPAN_KIND.client && String(span.attributes['url.full']).startsWith(stack.sandboxUrl))).not.toEqual(
          [],
        );

        // The worker: the POST's job span is the child of an enqueue under the operation (the trace may hold
        // other events' jobs too), and the delivery's SQL is under the job. The enqueue is the API's relay after its
        // commit, or the worker's reconciler when its pass (every 500 ms here) comes first: it adds the job in the
        // trace the event was recorded in, under the same operation.
        const job = ancestry(traceSpans, posted!).find((span) => span.name === 'process webhooks');
        expect(job).toMatchObject({ service: 'payments-worker', kind: SPAN_KIND.consumer });
        const enqueue = traceSpans.find((span) => span.spanId === job!.parentSpanId);
        expect(enqueue).toMatchObject({ kind: SPAN_KIND.producer, name: 'send webhooks' });
        expect(['payments-api', 'payments-worker']).toContain(enqueue!.service);
        expect(inOperation).toContain(enqueue);
        // The enqueue's Redis commands (BullMQ's script).
        expect(under(enqueue!).filter((span) => span.attributes['db.system.name'] === 'redis' || span.attributes['db.system'] === 'redis')).not.toEqual([]);
        const inJob = under(job!);
        expect(
          inJob.filter(
            (span) =>
              (span.service === 'payments-worker' && span.attributes['db.system.name'] === 'postgresql') || span.attributes['db.system'] === 'postgresql',
          ).length,
        ).toBeGreaterThan(0);
        expect(inJob).toContain(posted);
        return { posted: posted!, operation: operation!, request: request! };
      },
      { timeout: 30_000, interval: 50 },
    );

    // The merchant's endpoint got the POST's context, to join the trace.
    expect(delivery!.headers.traceparent).toBe(`00-${posted.traceId}-${posted.spanId}-01`);
    // `payments listen` forwards the event with the context of the operation that recorded it.
    expect(await listenHeader(shop, event.id)).toBe(`00-${operation!.traceId}-${operation!.spanId}-01`);

    // The request's log line names its trace and span.
    expect(stack.api.process.output.stdout).toContain(`"trace_id":"${request!.traceId}","span_id":"${request!.spanId}"`);
  }, 90_000);

  it("joins a processor's callback to the processor's trace when it carries a traceparent, through to the webhook it causes", async () => {
    const secret = `whsec_${randomBytes(18).toString('hex')}`;
    const shop = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
    const receiver = await startReceiver();
    defer(receiver.close);
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: receiver.url } }));
    const payment = await settlingPayment(shop);
    const transactionId = payment.activeAttempt!.connectorTransactionId!;
    const settled = await vi.waitFor(
      async () => {
        const atSandbox = await shop.sandboxPayment(`/${transactionId}`);
        expect(atSandbox.body.status).toBe('succeeded');
        return atSandbox.body;
      },
      { timeout: 10_000, interval: 20 },
    );
    const body = JSON.stringify({
      id: `evt_sbx_${randomBytes(6).toString('hex')}`,
      type: 'payment.succeeded',
      created: Math.floor(Date.now() / 1000),
      data: { object: settled },
    });
    // The processor's own span, as its tracing would send it.
    const [processorTraceId, processorSpanId] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex')];
    const answered = await fetch(`${stack.api.url}/webhooks/${shop.merchantId}/${shop.connectorAccountId}`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'sandbox-signature': sandboxSignature(body, secret),
        traceparent: `00-${processorTraceId}-${processorSpanId}-01`,
      },
    });
    expect([answered.status, await answered.json()]).toEqual([200, { received: true, outcome: 'applied' }]);
    await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');

    // The payment_succeeded delivery (the payment_processing one before it belongs to the confirm's trace).
    const delivery = receiver.received.find(
      (request) => (JSON.parse(request.body.toString('utf8')) as { event_type: string }).event_type === 'payment_succeeded',
    );
    const [, traceId, postSpanId] = String(delivery?.headers.traceparent).split('-');
    expect(traceId).toBe(processorTraceId);
    // Each process exports in its own batches: wait until the whole chain has arrived, asserting it each time.
    await vi.waitFor(
      () => {
        const posted = otlp.spans.find((candidate) => candidate.spanId === postSpanId);
        expect(posted).toBeDefined();
        const traceSpans = otlp.spans.filter((span) => span.traceId === processorTraceId);
        const callback = traceSpans.find((span) => span.parentSpanId === processorSpanId);
        expect(callback).toMatchObject({ service: 'payments-api', kind: SPAN_KIND.server });
        // The POST (worker) descends from the callback's span (API) through the enqueue and the job.
        const chain = ancestry(traceSpans, posted!);
        expect(chain.map((span) => span.name)).toEqual(['POST', 'process webhooks', 'send webhooks', 'POST']);
        expect(chain.at(-1)).toBe(callback);
      },
      { timeout: 30_000, interval: 50 },
    );
  }, 90_000);

  it('keeps a delivery the reconciler re-enqueued (its job lost) in the trace of the payment that recorded the event', async () => {
    const shop = await shopWithReceiver(stack, await startReceiver((_request, reply, index) => reply.writeHead(index === 0 ? 500 : 204).end()));
    defer(shop.receiver.close);
    const payment = await paidPayment(shop);
    const [first] = await shop.receiver.waitForRequests(1);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'PENDING');
    // The retry's job is lost (as when Redis lost its data) and the retry falls due: only the reconciler sends it.
    const config = loadConfig(testEnv(stack.env));
    const webhooks = new Queue(queues.webhooks.name, { connection: { url: config.REDIS_URL }, prefix: config.REDIS_PREFIX });
    defer(() => webhooks.close());
    await vi.waitFor(async () => expect(await webhooks.getJobState(event.id)).toBe('delayed'), { timeout: 10_000, interval: 20 });
    await webhooks.remove(event.id);
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    defer(() => db.end());
    await db.query('UPDATE events SET next_attempt_at = now() WHERE id = $1', [event.id]);

    const [, second] = await shop.receiver.waitForRequests(2, 15_000);
    const traceOf = (request: typeof first) => String(request!.headers.traceparent).split('-')[1];
    expect(traceOf(second)).toBe(traceOf(first));
    await vi.waitFor(
      () => {
        const posted = otlp.spans.find((span) => span.spanId === String(second!.headers.traceparent).split('-')[2]);
        expect(posted).toBeDefined();
        const chain = ancestry(
          otlp.spans.filter((span) => span.traceId === posted!.traceId),
          posted!,
        );
        // The POST, its job, and the reconciler's enqueue in the worker, under the confirm's operation in the API.
        expect(chain.slice(0, 4).map((span) => [span.name, span.service])).toEqual([
          ['POST', 'payments-worker'],
          ['process webhooks', 'payments-worker'],
          ['send webhooks', 'payments-worker'],
          ['mutation ConfirmPayment', 'payments-api'],
        ]);
      },
      { timeout: 30_000, interval: 50 },
    );
  }, 90_000);
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  const defer = deferredCleanups();
  it('registers nothing in the process: no provider, no spans', async () => {
    await startTracing('payments-test', {});
    expect(tracingEnabled()).toBe(false);
    const span = trace.getTracer('test').startSpan('anything');
    expect(span.isRecording()).toBe(false);
    span.end();
  });

  it('sends webhooks without traceparent and logs without trace ids', async () => {
    const stack = await startProcessStack({ workers: 1 });
    defer(stack.close);
    const shop = await shopWithReceiver(stack);
    const payment = await paidPayment(shop);
    const event = await eventReaching(shop, payment.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(shop.receiver.received[0]!.headers.traceparent).toBeUndefined();
    expect(await listenHeader(shop, event.id)).toBeUndefined();
    expect(`${stack.api.process.output.stdout}${stack.workers[0]!.output.stdout}`).not.toContain('trace_id');
  });
});
