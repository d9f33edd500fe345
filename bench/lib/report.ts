// bench/results.md: one short table (figure, its ceiling measured in the same run, ratio) and how to read it.
import type { benchCreateConfirm } from '../create-confirm.ts';
import type { benchCreatePayment } from '../create-payment.ts';
import type { benchRouting } from '../routing.ts';
import type { benchRoutingOutcomes } from '../routing-outcomes.ts';
import type { benchSubscriptions } from '../subscriptions.ts';
import type { benchWebhooks } from '../webhooks.ts';
import type { MachineInfo } from './machine.ts';
import type { ApiRuntime } from './stack.ts';
import { ratio } from './stats.ts';

export interface Results {
  benchmark: string;
  date: string;
  machine: MachineInfo;
  settings: Record<string, unknown>;
  wallSeconds: { total: number; parts: Record<string, number> };
  /** Parts that failed, with their error; their rows are missing. */
  failures: Record<string, string>;
  routing?: ReturnType<typeof benchRouting>;
  routingOutcomes?: Awaited<ReturnType<typeof benchRoutingOutcomes>>;
  createPayment?: Awaited<ReturnType<typeof benchCreatePayment>>;
  createConfirm?: Awaited<ReturnType<typeof benchCreateConfirm>>;
  webhooks?: Awaited<ReturnType<typeof benchWebhooks>>;
  subscriptions?: Awaited<ReturnType<typeof benchSubscriptions>>;
}

const number = (value: number) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: value < 10 ? 2 : value < 100 ? 1 : 0 }) : 'n/a';
const shown = (value: number | null) => (value === null ? 'n/a' : value.toFixed(value < 10 ? 2 : 1));

export function markdown(results: Results): string {
  const rows: [string, string, string, string][] = [];
  const row = (figure: string, measured: string, ceiling: string, value: number | null) => rows.push([figure, measured, ceiling, shown(value)]);
  /** How much of an open-model run's tail the API's event loop and collector explain (bench/lib/runtime-probe.ts). */
  const loopRow = (label: string, runtime: ApiRuntime, p99Ms: number) =>
    row(
      `${label}: the API's event-loop delay, p99 (largest GC pause; loop busy share)`,
      `${number(runtime.eventLoopDelayMs.p99)} ms (GC ${number(runtime.gc.maxMs)} ms; ${Math.round(runtime.eventLoopUtilization * 100)} %)`,
      `the run's p99 latency: ${number(p99Ms)} ms`,
      ratio(runtime.eventLoopDelayMs.p99, p99Ms),
    );
  const rt = results.routing;
  if (rt) {
    row(
      `Routing decision, a table of ${rt.rules} rules all read (the last one matches), p50 (goal < 50 µs)`,
      `${number(rt.rulesUs.p50)} µs`,
      `a priority list of the same accounts: ${number(rt.priorityUs.p50)} µs`,
      rt.ratios.p50ToPriority,
    );
  }
  const ro = results.routingOutcomes;
  if (ro) {
    const { successRate: sr, volumeSplit: vs } = ro;
    row(
      `Success-rate routing, one of two accounts declining half: first attempts of the last ${ro.payments.measuredLast} of ${ro.payments.degraded} payments to the healthy one (goal ≥ 80 %)`,
      `${number(sr.lastOfDegradedToHealthyPercent)} %`,
      'the goal: 80 %',
      ratio(sr.lastOfDegradedToHealthyPercent, 80),
    );
    row(
      `Success-rate routing, the declining account recovered: its share of first attempts, last ${ro.payments.measuredLast} of ${ro.payments.recovery} payments`,
      `${number(sr.lastAfterRecoveryToRecoveredPercent)} %`,
      `while it declined: ${number(sr.lastOfDegradedToRecoveredPercent)} %`,
      ratio(sr.lastAfterRecoveryToRecoveredPercent, sr.lastOfDegradedToRecoveredPercent),
    );
    row(
      `Volume split 70 / 30 over ${vs.payments} payments: first attempts per account (goal ± 5 points)`,
      `${number(vs.firstPercent)} % / ${number(vs.secondPercent)} %`,
      'the split: 70 % / 30 %',
      ratio(vs.firstPercent, 70),
    );
  }
  const cp = results.createPayment;
  if (cp) {
    const closed = `closed loop, ${cp.concurrency} connections`;
    row(
      `createPayment throughput (${closed}; goal ≥ 0.6)`,
      `${number(cp.service.closed.perSecond)} req/s`,
      `no-I/O Yoga ${number(cp.bareYoga.closed.perSecond)} req/s`,
      cp.ratios.throughputToBareYoga,
    );
    row(
      `createPayment throughput (${closed})`,
      `${number(cp.service.closed.perSecond)} req/s`,
      `pgbench, same SQL, ${cp.pgbench.clients} clients: ${number(cp.pgbench.transactionsPerSecond)} tx/s`,
      cp.ratios.throughputToPgbench,
    );
    row(
      `createPayment CPU time per request, API process (${closed}; goal ≤ 2)`,
      `${number(cp.service.closed.cpuMsPerOperation.api)} ms`,
      `no-I/O Yoga ${number(cp.bareYoga.closed.cpuMsPerOperation.bareYoga)} ms`,
      cp.ratios.cpuPerRequestToBareYoga,
    );
    row(
      `createPayment CPU time per request, every process of the machine (${closed}; the machine's ${results.machine.cpus} CPUs ÷ this: the most requests a second at this cost)`,
      `${number(cp.service.closed.cpuMsPerOperation.machine)} ms`,
      `no-I/O Yoga ${number(cp.bareYoga.closed.cpuMsPerOperation.machine)} ms`,
      cp.ratios.machineCpuPerRequestToBareYoga,
    );
    row(
      `createPayment p99 (${closed})`,
      `${number(cp.service.closed.latencyMs.p99)} ms`,
      `no-I/O Yoga ${number(cp.bareYoga.closed.latencyMs.p99)} ms`,
      cp.ratios.p99ClosedToBareYoga,
    );
    row(
      `createPayment p50 (open model, ${cp.openRatePerS}/s)`,
      `${number(cp.service.open.latencyMs.p50)} ms`,
      `no-I/O Yoga ${number(cp.bareYoga.open.latencyMs.p50)} ms`,
      cp.ratios.p50ToBareYoga,
    );
    row(
      `createPayment p99 (open model, ${cp.openRatePerS}/s; goal ≤ 5)`,
      `${number(cp.service.open.latencyMs.p99)} ms`,
      `no-I/O Yoga ${number(cp.bareYoga.open.latencyMs.p99)} ms`,
      cp.ratios.p99ToBareYoga,
    );
    loopRow(`createPayment, open model`, cp.service.openApiRuntime, cp.service.open.latencyMs.p99);
    row(
      `createPayment, open model: the API's own time per request, p99 (its headers read to its last byte written)`,
      `${number(cp.service.openApiRuntime.requestMs.p99)} ms`,
      `the run's p99 latency: ${number(cp.service.open.latencyMs.p99)} ms`,
      ratio(cp.service.openApiRuntime.requestMs.p99, cp.service.open.latencyMs.p99),
    );
  }
  for (const at of results.createConfirm?.byLatency ?? []) {
    const label = `create + confirm, sandbox ${at.sandboxLatencyMs} ms`;
    row(
      `${label}: throughput (closed loop, ${results.createConfirm!.concurrency} users)`,
      `${number(at.service.closed.perSecond)} payments/s`,
      `no-I/O Yoga ${number(at.bareYoga.closed.perSecond)} payments/s`,
      at.ratios.throughputToBareYoga,
    );
    row(
      `${label}: CPU time per payment, API process (closed loop)`,
      `${number(at.service.closed.cpuMsPerOperation.api)} ms`,
      `no-I/O Yoga ${number(at.bareYoga.closed.cpuMsPerOperation.bareYoga)} ms`,
      at.ratios.apiCpuPerPaymentToBareYoga,
    );
    row(
      `${label}: p99 (open model, ${at.openRatePerS}/s)`,
      `${number(at.service.open.latencyMs.p99)} ms`,
      `no-I/O Yoga ${number(at.bareYoga.open.latencyMs.p99)} ms`,
      at.ratios.openP99ToBareYoga,
    );
    row(
      `${label}: service overhead per payment, p50 (goal < 3 ms; Hyperswitch claims ~25 ms)`,
      `${number(at.service.overheadMs.p50)} ms`,
      `no-I/O Yoga ${number(at.bareYoga.overheadMs.p50)} ms`,
      at.ratios.overheadP50ToBareYoga,
    );
    row(
      `${label}: service overhead per payment, p99 (goal < 10 ms)`,
      `${number(at.service.overheadMs.p99)} ms`,
      `no-I/O Yoga ${number(at.bareYoga.overheadMs.p99)} ms`,
      ratio(at.service.overheadMs.p99, at.bareYoga.overheadMs.p99),
    );
    loopRow(`${label}, open model`, at.service.openApiRuntime, at.service.open.latencyMs.p99);
  }
  const wh = results.webhooks;
  if (wh) {
    row(
      `Webhook deliveries to a local 2xx receiver (worker concurrency ${wh.webhookConcurrency}), ceiling min(BullMQ no-op, pgbench)`,
      `${number(wh.deliveries.perSecond)}/s`,
      `BullMQ no-op jobs ${number(wh.rawBullmqJobsPerSecond)}/s; pgbench replaying a delivery's ${wh.sqlStatements.service.length} statements ${number(wh.pgbench.transactionsPerSecond)}/s`,
      wh.deliveries.ratioToCeiling,
    );

    row(
      `Drain of ${number(wh.backlog.events)} events after a ${number(wh.backlog.outageSeconds)} s receiver outage`,
      `${number(wh.backlog.drainSeconds)} s${wh.backlog.drained ? '' : ` (estimated from its rate: not drained within the ${Math.round(wh.backlog.drainLimitSeconds)} s left)`}`,
      `${number(wh.backlog.events)} deliveries at the ceiling's rate: ${number(wh.backlog.ceilingDrainSeconds)} s`,
      wh.backlog.ratioToCeiling,
    );
  }
  const sub = results.subscriptions;
  if (sub) {
    const n = number(sub.subscribers);
    row(
      `Subscription latency, commit to subscriber, p50 (${n} subscribers)`,
      `${number(sub.service.latencyMs.p50)} ms`,
      `Redis pub/sub → plain WebSockets ${number(sub.bareFanout.latencyMs.p50)} ms`,
      sub.ratios.p50ToBare,
    );
    row(
      `Subscription latency, commit to subscriber, p99 (${n} subscribers)`,
      `${number(sub.service.latencyMs.p99)} ms`,
      `Redis pub/sub → plain WebSockets ${number(sub.bareFanout.latencyMs.p99)} ms`,
      sub.ratios.p99ToBare,
    );
    row(
      'Subscription CPU time per 1,000 deliveries (API process, payments included)',
      `${number(sub.service.per1000.cpuMsPer1000Deliveries)} ms`,
      `plain WebSockets ${number(sub.bareFanout.per1000.cpuMsPer1000Deliveries)} ms`,
      sub.ratios.cpuToBare,
    );
    row(
      'Memory per 1,000 subscriptions: live (JS heap + external, after full GC)',
      `${number(sub.service.per1000.liveMbPer1000)} MB`,
      `plain WebSockets ${number(sub.bareFanout.per1000.liveMbPer1000)} MB`,
      sub.ratios.liveMemoryToBare,
    );
    row(
      'Memory per 1,000 subscriptions: API process RSS growth',
      `${number(sub.service.per1000.rssMbPer1000)} MB`,
      `plain WebSockets ${number(sub.bareFanout.per1000.rssMbPer1000)} MB`,
      sub.ratios.rssToBare,
    );
  }
  const m = results.machine;
  return [
    '# Benchmark results',
    '',
    `\`npm run bench\`, ${results.date}, commit ${m.gitCommit}${m.gitDirty ? ' (with uncommitted changes)' : ''}; ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, Node ${m.node}, ${m.postgres}, Redis ${m.redis}; load average ${m.loadAverageAtStart.join(' / ')} at the start, ${m.loadAverageAtEnd.join(' / ')} at the end; the whole run took ${Math.round(results.wallSeconds.total)} s. All figures are in bench/results.json.`,
    '',
    'Ratio = figure ÷ ceiling, both measured in this run. For rates, higher is better (1 = as fast as the ceiling); for times and memory, lower is better (1 = as fast or as small as the ceiling).',
    '',
    '| Figure | Measured | Ceiling (same run) | Ratio |',
    '|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    '',
    ...Object.entries(results.failures).map(([part, error]) => `**${part} failed** (its rows are missing): ${error.split('\n')[0]}\n`),
    '**How each figure is measured** (the service runs as deployed: API, worker and sandbox processor are separate processes on a fresh database; the load generator is a process of its own, on the same 2 CPUs).',
    '',
    `- *Routing outcomes*: payments one at a time (createPayment with confirm, card 4242…) through the running API and sandbox processors, on the demo merchant's sandbox account and a fauxpay account steered with the sandbox's /_control (declineRate 0.5, seeded; then 0). Success rate with windowSize ${results.routingOutcomes?.successRate.windowSize ?? 'n/a'} and explorationPercent ${results.routingOutcomes?.successRate.explorationPercent ?? 'n/a'}, the declining account listed first; a payment's draw comes from its id, so the volume split's shares are as uniform as the ids are random.`,
    `- *Routing decision*: \`decideRoute\` (src/modules/routing/machine.ts) in the bench process, no I/O, on ${results.routing?.rules ?? 'n/a'} rules of ${results.routing?.conditionsPerRule ?? 'n/a'} conditions each (amount, currency, card network, a metadata key) that the payment meets but for the metadata value of all rules but the last, with one candidate's circuit open; ${results.routing?.samples ?? 'n/a'} samples, each a batch of ${results.routing?.callsPerSample ?? 'n/a'} calls divided by its size. The ceiling is the same call with a priority list instead of the rules.`,
    "- *Closed loop*: a fixed number of connections (autocannon for createPayment) or virtual users (the create + confirm flow, bench/processes/load.ts), each sending its next request when the last is answered: throughput at that concurrency. *Open model*: a fixed arrival rate (half the service's closed-loop rate by default, `BENCH_OPEN_LOAD`), sent on schedule whether or not earlier requests were answered, latency counted from each request's due time: latency below saturation. The ceiling gets the same rate.",
    `- *CPU time per request or payment*: the CPU time (user + system, /proc) the API process used during the closed-loop run, its warm-up included, divided by the operations completed: work done rather than time waited, so a busy machine moves it less than throughput. The createPayment and create + confirm parts first load the processes they measure, the ceilings too, for ${results.settings.processWarmupS} s unmeasured: a process just started compiles and optimizes its code over its first thousands of requests. (PostgreSQL's, the worker's and the sandbox's CPU are in bench/results.json where they apply.) For createPayment the machine's row is every process's (/proc/stat: user, nice, system, irq, softirq; the load generator, PostgreSQL and Redis included, and anything else the machine ran meanwhile): the machine's CPUs divided by it are the most requests a second it could serve at that cost, all CPUs busy.`,
    '- *No-I/O Yoga*: graphql-yoga on node:http with the same mutations and selected fields, answering constants (bench/processes/bare-yoga.ts); its confirm waits the same processor latency.',
    `- *pgbench*: the ${statementCount(results.createPayment?.sqlStatements.service.length)} one createPayment sends (captured in the API process in this run${results.createPayment?.sqlStatements.same === false ? ', and they differ from the script: see bench/results.json' : ', the same as the script'}), replayed by bench/sql/create-payment.pgbench in pgbench's prepared mode (the service prepares it too) with as many clients as HTTP connections.`,
    "- *Service overhead per payment*: in the open-model run, each payment's end-to-end time (createPayment + confirmPayment, client side) minus the processor time of its authorization as the sandbox process itself timed it (headers in to last byte out, matched by the attempt id the service sends as Idempotency-Key; bench/lib/sandbox-timing.ts). What remains is the service: two HTTP + GraphQL requests, keys, SQL, the connector's HTTP client and the loopback hops.",
    `- *Webhooks*: committed events queued as the relay queues them and delivered by the worker process (claim, sign, POST, record); the ceiling is the lower of BullMQ's no-op jobs through one Worker at the same concurrency and pgbench replaying the statements one delivery sends (captured in the worker process in this run${results.webhooks?.sqlStatements.same === false ? ', and they differ from bench/sql/webhook-delivery.pgbench: see bench/results.json' : ', the same as bench/sql/webhook-delivery.pgbench'}) in pgbench's prepared mode, as the worker prepares them, with as many clients. The backlog is queued while the receiver answers 503; retries follow the seed's schedule scaled by WEBHOOK_RETRY_DELAY_SCALE=${results.webhooks?.backlog.retryDelayScale ?? 'n/a'}, so the drain measures delivery, not the schedule; the clock runs from the receiver's return to the last delivery.`,
    `- *Subscriptions*: graphql-ws subscribers of paymentEvents in their own process, while card payments start at a fixed rate (BENCH_PAYMENT_RATE, 10 a second: the goal's load, 20,000 deliveries a second with 1,000 subscribers) through a sandbox answering in 100 ms (BENCH_SUBSCRIPTION_SANDBOX_LATENCY_MS), after ${results.settings.subscriptionWarmupPayments} such payments (BENCH_SUBSCRIPTION_WARMUP_PAYMENTS) whose deliveries are not counted, in the service and the ceiling alike; latency from each event's createdAt (written in the committing transaction) to receipt, over every delivery; CPU time is the API process's (/proc) from the first measured payment to the last delivery, per 1,000 deliveries; memory is the API process's with the subscribers connected minus before, each read after full garbage collections: live (JS heap + external buffers) and resident (RSS, which also keeps what the allocator has not given back). The ceiling is Redis pub/sub written to as many plain WebSockets.`,
    '',
    'Absolute figures drift on shared machines; compare ratios, measured in the same run.',
    '',
  ].join('\n');
}

/** "1 statement", "2 statements", or n/a where the part did not run. */
const statementCount = (count: number | undefined) => (count === undefined ? 'n/a statements' : `${count} ${count === 1 ? 'statement' : 'statements'}`);
