// The load generator: a process of its own (never the server timing itself), given a JSON spec as its one
// argument; prints its result as one JSON line. Three models:
// - "autocannon": closed loop, `connections` keep-alive connections each sending its next request as soon as
//   the last one is answered (throughput at a fixed concurrency). One request shape: createPayment.
// - "closed": the same closed loop for a flow of requests (createPayment then confirmPayment), `concurrency`
//   virtual users each starting its next flow when the last ends.
// - "open": a fixed arrival rate (k6's constant-arrival-rate): arrival k is due at start + k / rate whether or
//   not earlier ones have been answered, and its latency counts from when it was due, so a slow server is
//   not hidden by a client that waits for it (no coordinated omission).
// Client-side latency only: from the first byte sent (or the due time) to the last byte of the answer.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec, Operation } from '../lib/load.ts';
import { summarize, round } from '../lib/stats.ts';
import { CONFIRM_PAYMENT, CREATE_PAYMENT, confirmVariables, createVariables } from '../lib/operations.ts';

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.model === 'open' ? spec.maxInFlight : spec.model === 'closed' ? spec.concurrency : 1 });
const run = randomBytes(4).toString('hex');
let sequence = 0;
const idempotencyKey = () => `bench-${run}-${(sequence += 1)}`;

const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };

function post(url: URL, key: string, body: string, extraHeaders: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'api-key': key, ...extraHeaders } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

type GraphQLAnswer = { data?: Record<string, Record<string, unknown> | null> | null; errors?: unknown[] };

async function graphql(key: string, query: string, variables: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const answer = await post(new URL('/graphql', spec.target.url), key, JSON.stringify({ query, variables }), headers);
  let parsed: GraphQLAnswer;
  try {
    parsed = JSON.parse(answer.body) as GraphQLAnswer;
  } catch {
    throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
  }
  if (answer.status !== 200 || parsed.errors || !parsed.data) throw new Error(`HTTP ${answer.status}: ${answer.body.slice(0, 300)}`);
  return Object.values(parsed.data)[0]!;
}

/** One operation; resolves with the attempt id for a flow (null for a single create). */
async function operate(operation: Operation): Promise<string | null> {
  const created = await graphql(spec.target.secretKey, CREATE_PAYMENT, createVariables(), { 'idempotency-key': idempotencyKey() });
  if (operation === 'createPayment') return null;
  const confirmed = await graphql(spec.target.publishableKey, CONFIRM_PAYMENT, confirmVariables(created.clientSecret as string, card));
  if (confirmed.status !== 'SUCCEEDED') throw new Error(`confirmPayment answered ${confirmed.status}`);
  return (confirmed.activeAttempt as { id: string }).id;
}

class Recorder {
  latencies: number[] = [];
  total = 0;
  flows: [string, number][] = [];
  errors = 0;
  errorSamples: string[] = [];

  ok(latencyMs: number, attemptId: string | null) {
    this.latencies.push(latencyMs);
    if (attemptId !== null) this.flows.push([attemptId, round(latencyMs, 3)]);
  }

  failed(error: unknown) {
    this.errors += 1;
    if (this.errorSamples.length < 5) this.errorSamples.push((error as Error).message.slice(0, 300));
  }

  result(model: LoadSpec['model'], operation: Operation, seconds: number, extra: Partial<LoadResult> = {}): LoadResult {
    return {
      model,
      operation,
      perSecond: round(this.latencies.length / seconds, 1),
      completed: this.latencies.length,
      totalCompleted: this.total,
      errors: this.errors,
      errorSamples: this.errorSamples,
      latencyMs: summarize(this.latencies),
      ...(operation === 'createConfirm' ? { flows: this.flows } : {}),
      ...extra,
    };
  }
}

async function closed(operation: Operation, concurrency: number, durationS: number, warmupS: number): Promise<LoadResult> {
  const recorder = new Recorder();
  const measureFrom = performance.now() + warmupS * 1000;
  const end = measureFrom + durationS * 1000;
  // Throughput is what completes inside the window; an operation still running at its end is not counted.
  const inWindow = (finished: number) => finished >= measureFrom && finished <= end;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        try {
          const attemptId = await operate(operation);
          recorder.total += 1;
          const finished = performance.now();
          if (inWindow(finished)) recorder.ok(finished - started, attemptId);
        } catch (error) {
          if (inWindow(performance.now())) recorder.failed(error);
        }
      }
    }),
  );
  return recorder.result('closed', operation, durationS);
}

async function open(operation: Operation, ratePerS: number, durationS: number, warmupS: number, maxInFlight: number): Promise<LoadResult> {
  const recorder = new Recorder();
  const interval = 1000 / ratePerS;
  const warmupArrivals = Math.round(warmupS * ratePerS);
  const total = warmupArrivals + Math.round(durationS * ratePerS);
  let inFlight = 0;
  let dropped = 0;
  let next = 0;
  const outstanding = new Set<Promise<void>>();
  const start = performance.now();
  const fire = (index: number, due: number) => {
    if (inFlight >= maxInFlight) {
      if (index >= warmupArrivals) dropped += 1;
      return;
    }
    inFlight += 1;
    const done = operate(operation).then(
      (attemptId) => {
        recorder.total += 1;
        if (index >= warmupArrivals) recorder.ok(performance.now() - due, attemptId);
      },
      (error: unknown) => {
        if (index >= warmupArrivals) recorder.failed(error);
      },
    );
    const tracked = done.finally(() => {
      inFlight -= 1;
      outstanding.delete(tracked);
    });
    outstanding.add(tracked);
  };
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        fire(next, start + next * interval);
        next += 1;
      }
      if (next >= total) return resolve();
      setTimeout(tick, Math.max(0, Math.min(2, start + next * interval - performance.now())));
    };
    tick();
  });
  await Promise.all(outstanding);
  return recorder.result('open', operation, durationS, { dropped });
}

async function withAutocannon(connections: number, durationS: number, warmupS: number): Promise<LoadResult> {
  const options = {
    url: new URL('/graphql', spec.target.url).toString(),
    method: 'POST' as const,
    connections,
    // A new Idempotency-Key for every request (autocannon replaces [<id>] with a fresh id each time).
    idReplacement: true,
    headers: { 'content-type': 'application/json', 'api-key': spec.target.secretKey, 'idempotency-key': `bench-${run}-[<id>]` },
    body: JSON.stringify({ query: CREATE_PAYMENT, variables: createVariables() }),
  };
  const warmup = warmupS > 0 ? await autocannon({ ...options, duration: warmupS }) : null;
  const result = await autocannon({ ...options, duration: durationS });
  const errors = result.errors + result.timeouts + result.non2xx;
  return {
    model: 'autocannon',
    operation: 'createPayment',
    perSecond: round(result['2xx'] / result.duration, 1),
    completed: result['2xx'],
    totalCompleted: result['2xx'] + (warmup?.['2xx'] ?? 0),
    errors,
    errorSamples: errors ? [`errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx}`] : [],
    latencyMs: {
      count: result.requests.total,
      mean: result.latency.mean,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
  };
}

let result: LoadResult;
switch (spec.model) {
  case 'autocannon':
    result = await withAutocannon(spec.connections, spec.durationS, spec.warmupS);
    break;
  case 'closed':
    result = await closed(spec.operation, spec.concurrency, spec.durationS, spec.warmupS);
    break;
  case 'open':
    result = await open(spec.operation, spec.ratePerS, spec.durationS, spec.warmupS, spec.maxInFlight);
    break;
}
agent.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
