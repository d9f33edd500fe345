// Webhook delivery against the machine's own ceiling, measured in the same run:
// - BullMQ alone: the rate at which one Worker runs no-op jobs (bench/processes/bullmq-noop.ts), same Redis,
//   same concurrency as the service's worker (WEBHOOK_CONCURRENCY);
// - the service: committed events (PENDING rows of `events`, as the outbox writes them, bodies serialized
//   by the service's own serializeWebhook from a real payment's payment_succeeded event) handed to the queue
//   the way the relay hands them (WebhookQueue, job id = event id), and delivered by the worker process
//   (src/main/worker.ts): claim in PostgreSQL, sign, POST to a local receiver process over keep-alive,
//   record the attempt, mark delivered. The clock runs from the first job added to no PENDING event left;
// - pgbench replaying the SQL one delivery sends (bench/sql/webhook-delivery.pgbench, captured in the worker
//   process in this run and compared with the script), with as many clients as the worker's concurrency, each
//   delivering events of its own: what PostgreSQL allows for that work.
// The delivery's ceiling is the lower of the two.
// Then the backlog: the receiver answers 503 while BENCH_BACKLOG_EVENTS events are committed and queued, and
// BENCH_OUTAGE_S more; the worker tries, fails, and schedules retries by the seed's table scaled by
// WEBHOOK_RETRY_DELAY_SCALE (BENCH_RETRY_DELAY_SCALE, 0.001 by default: 1 min → 60 ms, 5 min → 300 ms,
// 10 min → 600 ms), so the drain measures delivery, not the schedule. The receiver comes back and the
// clock runs until every event is DELIVERED. Its ceiling: the same number of deliveries at the ceiling's rate.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { serializeWebhook } from '../src/modules/events/signature.ts';
import { createLogger } from '../src/platform/logger.ts';
import { WebhookQueue } from '../src/modules/events/jobs.ts';
import { deliveryHeaders } from '../src/modules/events/delivery.ts';
import { CONFIRM_PAYMENT, CREATE_PAYMENT, confirmVariables, createVariables } from './lib/operations.ts';
import { runPgbenchScript, scriptDrift, scriptStatements, statementShape, type PgbenchResult } from './create-payment.ts';
import { Child, freePort, runToCompletion } from './lib/processes.ts';
import type { Stack } from './lib/stack.ts';
import { ratio, round } from './lib/stats.ts';

const BATCH = 20_000;

async function graphql(stack: Stack, key: string, query: string, variables: unknown) {
  const response = await fetch(`${stack.apiUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, Record<string, unknown>>; errors?: unknown };
  if (body.errors || !body.data) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
  return Object.values(body.data)[0]!;
}

/** The `content.object` of a real payment_succeeded event: one card payment through the service. */
async function realPaymentObject(stack: Stack): Promise<Record<string, unknown>> {
  const created = await graphql(stack, stack.demo.secretKey, CREATE_PAYMENT, createVariables());
  const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
  await graphql(stack, stack.demo.publishableKey, CONFIRM_PAYMENT, confirmVariables(created.clientSecret as string, card));
  const { rows } = await stack.sql.query<{ body: string }>(`SELECT body FROM events WHERE object_id = $1 AND event_type = 'payment_succeeded'`, [created.id]);
  if (!rows[0]) throw new Error('the sample payment recorded no payment_succeeded event');
  return (JSON.parse(rows[0].body) as { content: { object: Record<string, unknown> } }).content.object;
}

/** `count` event ids as the service makes them (evt_ and 24 characters). */
const eventIds = (count: number) => Array.from({ length: count }, () => `evt_${randomBytes(12).toString('hex')}`);

/**
 * Committed, PENDING, due events of the demo profile with these `ids`, written in bulk by PostgreSQL itself.
 * Each body is the service's serializeWebhook output for the template payment, with the event's own id and
 * payment id in it (put in by replace() on placeholders of the same length: same bytes as if serialized one
 * by one, without sending 1.5 KB per event over the wire).
 */
async function insertEvents(stack: Stack, template: Record<string, unknown>, ids: string[], dueAt?: Date): Promise<void> {
  const { merchantId, profileId } = stack.demo;
  const eventPlaceholder = `evt_${'E'.repeat(24)}`;
  const paymentPlaceholder = `pay_${'P'.repeat(24)}`;
  for (let start = 0; start < ids.length; start += BATCH) {
    const now = new Date();
    const body = serializeWebhook({
      merchantId,
      eventId: eventPlaceholder,
      eventType: 'payment_succeeded',
      contentType: 'payment_details',
      object: { ...template, payment_id: paymentPlaceholder },
      timestamp: now,
    });
    await stack.sql.query(
      `INSERT INTO events (id, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version, body, is_test,
                           delivery_status, attempt_count, automatic_attempts, next_attempt_at, created_at)
       SELECT e.id, $1, $2, 'TEST', 'payment_succeeded', 'payment_details', e.object_id, 1,
              replace(replace($3, $4, e.id), $5, e.object_id), false, 'PENDING', 0, 0, $8, $6
       FROM (SELECT id, 'pay_' || substr(md5(random()::text || id), 1, 24) AS object_id FROM unnest($7::text[]) AS id) AS e`,
      [merchantId, profileId, body, eventPlaceholder, paymentPlaceholder, now, ids.slice(start, start + BATCH), dueAt ?? now],
    );
  }
}

/** Adds one job per event to the service's webhook queue, with the relay's job options (job id = event id). */
async function enqueue(queue: WebhookQueue, ids: string[]): Promise<void> {
  // The relay adds one job per commit (WebhookQueue.enqueue); a backlog of thousands is added in bulk
  // through the same queue (same name, prefix and default job options), only faster: 4 bulks at a time.
  const bullQueue = queue['queue'];
  const chunks: string[][] = [];
  for (let start = 0; start < ids.length; start += 1000) chunks.push(ids.slice(start, start + 1000));
  const adder = async () => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      await bullQueue.addBulk(
        'deliver',
        chunk.map((eventId) => ({ data: { eventId }, options: { jobId: eventId } })),
      );
    }
  };
  await Promise.all([adder(), adder(), adder(), adder()]);
}

/** Waits until no event is PENDING; false if some still are after `timeoutS`. */
async function waitUntilNoPending(stack: Stack, timeoutS: number): Promise<boolean> {
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    // EXISTS stops at the first pending row: polling a 100,000-row backlog every 100 ms with count(*) would
    // take PostgreSQL time from the drain it measures.
    const pending = await stack.count(`SELECT (EXISTS (SELECT 1 FROM events WHERE delivery_status = 'PENDING'))::int AS n`);
    if (pending === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startReceiver() {
  const port = await freePort();
  const child = new Child('receiver', 'bench/processes/receiver.ts', { env: { PORT: String(port) }, ipc: true });
  await child.waitFor(/receiver listening/);
  return {
    child,
    url: `http://127.0.0.1:${port}/`,
    setStatus: (status: number) => child.request('mode', { status }),
    counts: async () => (await child.request<{ counts: Record<string, number> }>('counts')).counts,
  };
}

const PGBENCH_SCRIPT = fileURLToPath(new URL('sql/webhook-delivery.pgbench', import.meta.url));

/** The statements one delivery to a 2xx receiver sends, captured in the worker process. */
async function captureDeliveryStatements(stack: Stack, queue: WebhookQueue, template: Record<string, unknown>) {
  const ids = eventIds(1);
  await insertEvents(stack, template, ids);
  await stack.worker!.request('sql-capture-start');
  await enqueue(queue, ids);
  if (!(await waitUntilNoPending(stack, 30))) throw new Error('the captured delivery did not finish within 30 s');
  const { statements } = await stack.worker!.request<{ statements: string[] }>('sql-capture-stop');
  return statements.map(statementShape);
}

/**
 * pgbench replaying one delivery's statements with `clients` connections: each client delivers events of its
 * own (evt_pgb_<client>_<n>, committed and due beforehand like the service's), `perClient` of them.
 */
async function runDeliveryPgbench(stack: Stack, template: Record<string, unknown>, clients: number, perClient: number): Promise<PgbenchResult> {
  const ids = Array.from({ length: clients * perClient }, (_, index) => `evt_pgb_${Math.floor(index / perClient)}_${(index % perClient) + 1}`);
  // Due in an hour, which the script's claim allows for: the worker's reconciler leaves them alone.
  await insertEvents(stack, template, ids, new Date(Date.now() + 3_600_000));
  const { url } = (await stack.sql.query<{ url: string }>('SELECT test_webhook_url AS url FROM business_profiles WHERE id = $1', [stack.demo.profileId]))
    .rows[0]!;
  try {
    const result = await runPgbenchScript(stack, PGBENCH_SCRIPT, clients, ['-t', String(perClient)], {
      n: '0',
      url,
      // The headers one delivery records (each signature as long as the service's), as the worker stores them.
      request_headers: JSON.stringify(deliveryHeaders('evt_pgb_0_1', '{}', { current: 'k', previous: null }, new Date(), null)),
    });
    // Each transaction must have delivered an event of its own, as each of the service's deliveries does.
    const delivered = await stack.count(`SELECT count(*) AS n FROM events WHERE delivery_status = 'DELIVERED' AND id = ANY($1)`, [ids]);
    if (delivered !== ids.length) throw new Error(`pgbench delivered ${delivered} of its ${ids.length} events`);
    return result;
  } finally {
    // What a failed replay left undelivered (more clients than max_connections, say) would keep the parts below
    // waiting for "no event pending" until their timeout. Such an event has no attempt row: its claim writes none.
    await stack.sql.query(`DELETE FROM events WHERE id = ANY($1) AND delivery_status = 'PENDING'`, [ids]);
  }
}

/** runDeliveryPgbench, or what it failed with (the ratio is then left empty). */
function deliveryPgbench(stack: Stack, template: Record<string, unknown>, clients: number, perClient: number): Promise<PgbenchResult> {
  return runDeliveryPgbench(stack, template, clients, perClient).catch((error: unknown): PgbenchResult => {
    console.warn(`  pgbench failed: ${(error as Error).message}`);
    return {
      clients,
      transactionsPerSecond: Number.NaN,
      latencyAverageMs: Number.NaN,
      transactions: 0,
      failed: 0,
      error: (error as Error).message.slice(0, 2000),
    };
  });
}

export async function benchWebhooks(stack: Stack) {
  const { events, rawJobs, webhookConcurrency, backlogEvents, outageS, drainTimeoutS, retryDelayScale } = stack.settings;
  await stack.start({ sandboxLatencyMs: 0 });
  const template = await realPaymentObject(stack);

  console.log(`webhooks: BullMQ no-op ceiling, ${rawJobs} jobs at concurrency ${webhookConcurrency}`);
  const raw = await runToCompletion<{ perSecond: number }>('bullmq-noop', 'bench/processes/bullmq-noop.ts', {
    args: [JSON.stringify({ redisUrl: stack.settings.redisUrl, prefix: stack.prefix, count: rawJobs, concurrency: webhookConcurrency })],
  });
  console.log(`  ${Math.round(raw.perSecond)} jobs/s`);

  const receiver = await startReceiver();
  const queue = new WebhookQueue(stack.config, createLogger('silent'));
  try {
    await stack.context.db.businessProfile.update({ where: { id: stack.demo.profileId }, data: { testWebhookUrl: receiver.url, testWebhookDisabledAt: null } });

    const statements = await captureDeliveryStatements(stack, queue, template);
    const replayed = await scriptStatements(PGBENCH_SCRIPT);
    const drift = scriptDrift(statements, replayed);
    if (drift !== null) console.warn(`webhooks: bench/sql/webhook-delivery.pgbench does not replay what the worker sends: ${drift}`);
    console.log(`webhooks: pgbench, ${webhookConcurrency} clients`);
    const pgbench = await deliveryPgbench(stack, template, webhookConcurrency, Math.ceil(events / webhookConcurrency));
    console.log(`  ${pgbench.transactionsPerSecond} tps`);
    const ceilingPerSecond = Math.min(raw.perSecond, Number.isNaN(pgbench.transactionsPerSecond) ? Infinity : pgbench.transactionsPerSecond);

    console.log(`webhooks: ${events} deliveries to a 2xx receiver`);
    const steadyIds = eventIds(events);
    await insertEvents(stack, template, steadyIds);
    const workerCpuBefore = stack.worker!.cpuMs();
    let started = performance.now();
    await enqueue(queue, steadyIds);
    if (!(await waitUntilNoPending(stack, drainTimeoutS))) throw new Error(`${events} deliveries did not finish within ${drainTimeoutS} s`);
    const steadySeconds = (performance.now() - started) / 1000;
    const delivered = await stack.count(`SELECT count(*) AS n FROM events WHERE delivery_status = 'DELIVERED' AND id = ANY($1)`, [steadyIds]);
    const received = (await receiver.counts())['204'] ?? 0;
    if (delivered !== events || received < events) throw new Error(`expected ${events} deliveries, got ${delivered} delivered and ${received} received`);
    const perSecond = events / steadySeconds;
    const workerCpuMsPerDelivery = (stack.worker!.cpuMs() - workerCpuBefore) / events;
    console.log(`  ${Math.round(perSecond)} deliveries/s, worker CPU ${round(workerCpuMsPerDelivery, 3)} ms per delivery`);

    console.log(`webhooks: backlog of ${backlogEvents} events committed and queued while the receiver answers 503, then ${outageS} s more`);
    await receiver.setStatus(503);
    const outageStarted = performance.now();
    const backlogIds = eventIds(backlogEvents);
    await insertEvents(stack, template, backlogIds);
    const insertSeconds = (performance.now() - outageStarted) / 1000;
    await enqueue(queue, backlogIds);
    const queueSeconds = (performance.now() - outageStarted) / 1000 - insertSeconds;
    await new Promise((resolve) => setTimeout(resolve, outageS * 1000));
    const outageSeconds = (performance.now() - outageStarted) / 1000;
    const failedDuringOutage = (await receiver.counts())['503'] ?? 0;
    await receiver.setStatus(204);
    started = performance.now();
    // BENCH_DRAIN_TIMEOUT_S, or what is left of the run's time budget if that is less.
    const drainLimitS = Math.max(30, Math.min(drainTimeoutS, (stack.deadline - started) / 1000));
    const drained = await waitUntilNoPending(stack, drainLimitS);
    const elapsed = (performance.now() - started) / 1000;
    const backlogDelivered = await stack.count(`SELECT count(*) AS n FROM events WHERE delivery_status = 'DELIVERED' AND id = ANY($1)`, [backlogIds]);
    if (drained && backlogDelivered !== backlogEvents) throw new Error(`backlog: ${backlogDelivered} of ${backlogEvents} delivered`);
    // A drain cut short by BENCH_DRAIN_TIMEOUT_S is reported at the rate it went (marked as an estimate).
    const drainPerSecond = backlogDelivered / elapsed;
    const drainSeconds = drained ? elapsed : backlogEvents / drainPerSecond;
    const retried = await stack.count(`SELECT count(DISTINCT event_id) AS n FROM webhook_delivery_attempts WHERE response_status = 503`);
    const workerRssMb = stack.worker!.rssMb();
    console.log(
      `  ${drained ? 'drained in' : `NOT drained within ${round(drainLimitS)} s; at its rate it would take`} ${round(drainSeconds, 1)} s (${failedDuringOutage} attempts failed during the outage, ${retried} events retried)`,
    );
    if (!drained) {
      // What is left must not be delivered during the next part: the profile loses its URL, the rows go.
      await stack.sql.query(`UPDATE events SET delivery_status = 'NOT_SENT', next_attempt_at = NULL WHERE delivery_status = 'PENDING'`);
    }
    await stack.context.db.businessProfile.update({ where: { id: stack.demo.profileId }, data: { testWebhookUrl: null } });

    const ceilingDrainSeconds = backlogEvents / ceilingPerSecond;
    return {
      webhookConcurrency,
      rawBullmqJobsPerSecond: Math.round(raw.perSecond),
      pgbench,
      deliveries: {
        events,
        seconds: round(steadySeconds),
        perSecond: Math.round(perSecond),
        workerCpuMsPerDelivery: round(workerCpuMsPerDelivery, 3),
        ratioToBullmq: ratio(perSecond, raw.perSecond),
        ceilingPerSecond: Math.round(ceilingPerSecond),
        ratioToCeiling: ratio(perSecond, ceilingPerSecond),
      },
      sqlStatements: { service: statements.map((shape) => shape.name), pgbenchScript: replayed.map((shape) => shape.name), same: drift === null, drift },
      backlog: {
        events: backlogEvents,
        secondsToInsert: round(insertSeconds),
        secondsToQueue: round(queueSeconds),
        outageSeconds: round(outageSeconds, 1),
        attemptsFailedDuringOutage: failedDuringOutage,
        eventsRetried: retried,
        retryDelayScale,
        drained,
        drainLimitSeconds: round(drainLimitS),
        drainSeconds: round(drainSeconds, 1),
        drainPerSecond: Math.round(drainPerSecond),
        ceilingDrainSeconds: round(ceilingDrainSeconds, 1),
        ratioToCeiling: ratio(drainSeconds, ceilingDrainSeconds),
        drainRateToSteadyRate: ratio(drainPerSecond, perSecond),
        workerRssMbAfterDrain: round(workerRssMb, 1),
      },
    };
  } finally {
    await queue.close();
    await receiver.child.stop();
  }
}
