// Runs the load generator (bench/processes/load.ts) as a process of its own and returns its result.
import { machineCpuMs, runToCompletion, type Child } from './processes.ts';
import { round, type LatencySummary } from './stats.ts';

export interface Target {
  url: string;
  secretKey: string;
  publishableKey: string;
}

export type Operation = 'createPayment' | 'createConfirm';

export type LoadSpec =
  | { model: 'autocannon'; target: Target; connections: number; durationS: number; warmupS: number }
  | { model: 'closed'; target: Target; operation: Operation; concurrency: number; durationS: number; warmupS: number }
  | { model: 'open'; target: Target; operation: Operation; ratePerS: number; durationS: number; warmupS: number; maxInFlight: number };

export interface LoadResult {
  model: LoadSpec['model'];
  operation: Operation;
  /** Completed operations (requests, or flows) per second over the measured window. */
  perSecond: number;
  completed: number;
  /** Every operation that succeeded, warm-up and stragglers included (to divide a process's CPU time by). */
  totalCompleted: number;
  errors: number;
  errorSamples: string[];
  latencyMs: LatencySummary;
  /** Open model: arrivals not sent because `maxInFlight` were already waiting (the rate was above capacity). */
  dropped?: number;
  /** createConfirm flows: the attempt id each flow's confirm reported and its end-to-end time (ms). */
  flows?: [string, number][];
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const result = await runToCompletion<LoadResult>(`load (${spec.model})`, 'bench/processes/load.ts', { args: [JSON.stringify(spec)] });
  if (result.errors > 0) console.warn(`  ${result.errors} errors, e.g. ${result.errorSamples.join(' | ')}`);
  return result;
}

/**
 * Runs `spec` for `seconds`, measuring nothing. A process just started compiles and optimizes its code over its first
 * thousands of requests: a fresh API spent 10.9 ms of CPU per create + confirm in its first 8 s under load against
 * 4.9 ms from its 16th second on. That is start-up, paid once per process, not the cost of a payment, so the createPayment
 * and create + confirm parts warm the processes they measure (the service and its ceiling alike) before their first measured run.
 */
export async function warmUp(spec: LoadSpec, seconds: number): Promise<void> {
  if (seconds > 0) await runLoad({ ...spec, durationS: seconds, warmupS: 0 });
}

/**
 * Runs `spec` and charges each process in `processes` its CPU time per completed operation (ms): a figure
 * that a busy machine slows less than throughput, since it counts work, not waiting. `machine` is every process's
 * (the load generator's, PostgreSQL's and Redis's too): on a machine whose CPUs they share, its inverse bounds the rate.
 */
export async function runLoadMeasuringCpu<Name extends string>(spec: LoadSpec, processes: Record<Name, Child>) {
  const before = Object.fromEntries(Object.entries<Child>(processes).map(([name, child]) => [name, child.cpuMs()]));
  const machineBefore = machineCpuMs();
  const result = await runLoad(spec);
  const perOperation = (ms: number) => round(ms / Math.max(1, result.totalCompleted), 3);
  const byProcess = Object.fromEntries(Object.entries<Child>(processes).map(([name, child]) => [name, perOperation(child.cpuMs() - before[name]!)]));
  return { ...result, cpuMsPerOperation: { ...(byProcess as Record<Name, number>), machine: perOperation(machineCpuMs() - machineBefore) } };
}

/** What the JSON keeps of a run (the per-flow samples are summarized elsewhere). */
export function summaryOf<Result extends LoadResult>(result: Result): Omit<Result, 'flows'> {
  const { flows: _flows, ...rest } = result;
  return rest;
}
