// The bench's sizes, from the environment (defaults: the full run, under 10 minutes on a 2-CPU machine).
// Develop with small ones, e.g. BENCH_DURATION_S=3 BENCH_BACKLOG_EVENTS=2000 BENCH_SUBSCRIBERS=100.

// In the order they run: the pure micro-benchmarks first, in the bench process before the stack's processes
// start (they need none of it); the webhook backlog last, so its drain can use what is left of the time budget.
const PARTS = ['routing', 'createPayment', 'createConfirm', 'routingOutcomes', 'subscriptions', 'webhooks'] as const;
export type Part = (typeof PARTS)[number];
/** Parts that need no database, Redis or service process: with only these, none is started. */
const PURE_PARTS = ['routing'] as const satisfies readonly Part[];
export type PurePart = (typeof PURE_PARTS)[number];
export const isPurePart = (part: Part): part is PurePart => (PURE_PARTS as readonly Part[]).includes(part);

function number(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name}: must be a number from ${min} to ${max}, not "${raw}"`);
  return value;
}

function list(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const values = raw.split(',').map((item) => Number(item.trim()));
  if (values.some((value) => !Number.isInteger(value) || value < 0 || value > 30_000))
    throw new Error(`${name}: must be a comma-separated list of integers from 0 to 30000`);
  return values;
}

export function loadSettings() {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  const unknown = only.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown part(s) ${unknown.join(', ')}; choose from ${PARTS.join(', ')}`);
  return {
    parts: (only.length ? only : PARTS) as readonly Part[],
    /** Connections (closed loop) and pgbench clients. */
    concurrency: number('BENCH_CONCURRENCY', 32, 1, 1000),
    /** Seconds each closed-loop and open-model run is measured. */
    durationS: number('BENCH_DURATION_S', 8, 1, 600),
    /** Seconds of load before each measured window, not counted. */
    warmupS: number('BENCH_WARMUP_S', 2, 0, 60),
    /**
     * Seconds of unmeasured load a process just started gets before its first measured run (load.ts, warmUp):
     * service and ceiling alike.
     */
    processWarmupS: number('BENCH_PROCESS_WARMUP_S', 8, 0, 600),
    /** The open-model arrival rate, as a fraction of the service's closed-loop throughput in the same run. */
    openLoad: number('BENCH_OPEN_LOAD', 0.5, 0.01, 1),
    /** Sandbox latencies (SANDBOX_LATENCY_MS) the create + confirm flow is measured at. */
    sandboxLatenciesMs: list('BENCH_SANDBOX_LATENCIES_MS', [0, 100]),
    /** Webhook deliveries timed to a 2xx receiver (steady state). */
    events: number('BENCH_EVENTS', 5000, 10, 1_000_000),
    /** No-op jobs for BullMQ's ceiling. */
    rawJobs: number('BENCH_RAW_JOBS', 20_000, 100, 10_000_000),
    /** WEBHOOK_CONCURRENCY of the worker process (the service's default), and the ceilings' concurrency. */
    webhookConcurrency: number('BENCH_WEBHOOK_CONCURRENCY', 32, 1, 1000),
    /** Events piled up during the receiver's outage. */
    backlogEvents: number('BENCH_BACKLOG_EVENTS', 100_000, 10, 10_000_000),
    /** How long the receiver goes on answering 503 once the backlog is committed and queued. */
    outageS: number('BENCH_OUTAGE_S', 5, 0, 3600),
    /** WEBHOOK_RETRY_DELAY_SCALE of the worker: 0.001 makes the schedule's 1 min, 5 min, 10 min... 60 ms, 300 ms, 600 ms... */
    retryDelayScale: number('BENCH_RETRY_DELAY_SCALE', 0.001, 0.000001, 1),
    /** Give up on the drain after this long. */
    drainTimeoutS: number('BENCH_DRAIN_TIMEOUT_S', 420, 1, 7200),
    /**
     * The whole run's time budget: the backlog drain (the last part) stops waiting when it would overrun it
     * (its time is then estimated from its rate, and marked so), so a busy machine still finishes in time.
     */
    budgetS: number('BENCH_BUDGET_S', 570, 60, 86_400),
    subscribers: number('BENCH_SUBSCRIBERS', 1000, 1, 100_000),
    /** Payments (create + confirm, two events each) whose events the subscribers receive. */
    payments: number('BENCH_PAYMENTS', 20, 1, 10_000),
    /**
     * Payments a second started during the subscription run (a fixed arrival rate: the fan-out is measured
     * at the same load however fast the service makes payments). 10 is issue 24's goal load: 20,000 deliveries a
     * second with 1,000 subscribers.
     */
    paymentRate: number('BENCH_PAYMENT_RATE', 10, 0.1, 1000),
    /**
     * Payments, at the same rate, whose events the subscribers receive before the measured ones, not counted: the
     * fan-out's code runs for the first time there, in the service and the ceiling alike (as BENCH_PROCESS_WARMUP_S).
     */
    subscriptionWarmupPayments: number('BENCH_SUBSCRIPTION_WARMUP_PAYMENTS', 10, 0, 10_000),
    /**
     * The sandbox's latency (SANDBOX_LATENCY_MS) during the subscription run: a real processor's, so a
     * payment's two events come apart, as they do in production, rather than within a millisecond or two
     * (which measures how two events share one fan-out, not the latency of one).
     */
    subscriptionSandboxLatencyMs: number('BENCH_SUBSCRIPTION_SANDBOX_LATENCY_MS', 100, 0, 30_000),
    databaseServerUrl: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    pgbench: process.env.PGBENCH ?? '/usr/bin/pgbench',
  };
}

export type Settings = ReturnType<typeof loadSettings>;
