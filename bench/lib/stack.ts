// The system under test, as it is deployed: the API (src/main/api.ts), a worker (src/main/worker.ts) and the
// sandbox processor (sandbox/src/main.ts), each its own process, on a fresh migrated database and a Redis
// prefix of their own. The bench process only sets up data (the demo merchant), reads counts, and drives
// load through other processes. `close` stops every process and drops the database and the prefix's keys.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/platform/config.ts';
import { createScratchDatabase, type ScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { deleteKeysUnder } from '../../src/platform/queues/prefix-keys.ts';
import { createServiceContext } from '../../src/main/service-context.ts';
import type { ServiceContext } from '../../src/platform/context.ts';
import { ensureDemoMerchant, generateDemoKeys, type DemoCredentials } from '../../src/modules/merchants/demo.ts';
import { Child, freePort, waitForHttp } from './processes.ts';
import type { Settings } from './settings.ts';

/**
 * Node's --cpu-prof for a service process when BENCH_CPU_PROF_DIR is set (docs/benchmarks.md, "Profiling"): its
 * .cpuprofile files, written when it stops, go to a folder named after the process. Node's own file names are kept:
 * they tell the main thread from tsx's loader thread (a fixed --cpu-prof-name would have one overwrite the other).
 */
function cpuProfileFlags(name: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}/${name}`] : [];
}

/** What bench/lib/runtime-probe.ts saw in the API's process during a run. */
export interface ApiRuntime {
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  eventLoopUtilization: number;
  gc: { pauses: number; totalMs: number; p99Ms: number; maxMs: number };
  /** The API's own time per HTTP request (headers parsed to the response's last byte), every request of the run. */
  requestMs: { count: number; p50: number; p99: number; max: number };
}

export class Stack {
  api: Child | null = null;
  worker: Child | null = null;
  sandbox: Child | null = null;
  sandboxLatencyMs = 0;
  /** When the run's time budget ends (performance.now() clock). */
  deadline = Number.POSITIVE_INFINITY;
  /** A pool for the bench's own reads and bulk writes (counts, events), beside the service's. */
  readonly sql: pg.Pool;
  readonly redis: Redis;

  private constructor(
    readonly settings: Settings,
    readonly runId: string,
    readonly database: ScratchDatabase,
    readonly config: Config,
    /** The environment every service process gets (API and worker; the sandbox takes its own part). */
    readonly env: Record<string, string>,
    readonly apiPort: number,
    readonly sandboxPort: number,
    readonly context: ServiceContext,
    readonly demo: DemoCredentials,
  ) {
    this.sql = new pg.Pool({ connectionString: database.url, max: 4 });
    this.redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1 });
  }

  static async create(settings: Settings): Promise<Stack> {
    const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    const database = await createScratchDatabase(settings.databaseServerUrl, `payments_bench_${runId}`);
    try {
      const [apiPort, sandboxPort, workerMetricsPort] = [await freePort(), await freePort(), await freePort()];
      const env: Record<string, string> = {
        NODE_ENV: 'production',
        ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        LOG_LEVEL: 'warn',
        DATABASE_URL: database.url,
        REDIS_URL: settings.redisUrl,
        REDIS_PREFIX: `bench_${runId}`,
        HOST: '127.0.0.1',
        PORT: String(apiPort),
        // A port of its own, so a bench beside another run (or a dev worker) does not collide on the default.
        WORKER_METRICS_PORT: String(workerMetricsPort),
        SANDBOX_URL: `http://127.0.0.1:${sandboxPort}`,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAY_SCALE: String(settings.retryDelayScale),
        WEBHOOK_CONCURRENCY: String(settings.webhookConcurrency),
        SUBSCRIPTIONS_PER_KEY: String(settings.subscribers + 10),
        SUBSCRIPTIONS_PER_PROCESS: String(Math.max(10_000, settings.subscribers + 10)),
      };
      const config = loadConfig(env);
      const context = createServiceContext(config, createLogger('silent'));
      const demo = await ensureDemoMerchant(context, generateDemoKeys());
      return new Stack(settings, runId, database, config, env, apiPort, sandboxPort, context, demo);
    } catch (error) {
      await database.drop();
      throw error;
    }
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  get prefix(): string {
    return this.env.REDIS_PREFIX!;
  }

  /** The load generator's view of the service: where, and the demo merchant's keys. */
  get target() {
    return { url: this.apiUrl, secretKey: this.demo.secretKey, publishableKey: this.demo.publishableKey };
  }

  /** Starts what is not running: sandbox (at `sandboxLatencyMs`), API, worker. */
  async start(options: { sandboxLatencyMs?: number } = {}): Promise<void> {
    const latency = options.sandboxLatencyMs ?? this.sandboxLatencyMs;
    if (this.sandbox && latency !== this.sandboxLatencyMs) {
      await this.sandbox.stop();
      this.sandbox = null;
    }
    this.sandboxLatencyMs = latency;
    // A process that died (in a part that failed) is started again.
    if (this.sandbox && !this.sandbox.alive) this.sandbox = null;
    if (this.api && !this.api.alive) this.api = null;
    if (this.worker && !this.worker.alive) this.worker = null;
    const starting: Promise<void>[] = [];
    if (!this.sandbox) {
      this.sandbox = new Child('sandbox', 'sandbox/src/main.ts', {
        env: { SANDBOX_PORT: String(this.sandboxPort), SANDBOX_HOST: '127.0.0.1', SANDBOX_LATENCY_MS: String(latency) },
        preload: ['./bench/lib/sandbox-timing.ts'],
        ipc: true,
      });
      starting.push(this.sandbox.waitFor(/sandbox listening on/).then(() => undefined));
    }
    if (!this.api) {
      this.api = new Child('api', 'src/main/api.ts', {
        env: this.env,
        preload: ['./bench/lib/sql-capture.ts', './bench/lib/memory-probe.ts', './bench/lib/runtime-probe.ts'],
        nodeFlags: ['--expose-gc', ...cpuProfileFlags('api')],
        ipc: true,
      });
      starting.push(waitForHttp(`${this.apiUrl}/health`, this.api));
    }
    if (!this.worker) {
      this.worker = new Child('worker', 'src/main/worker.ts', {
        env: { ...this.env, LOG_LEVEL: 'info' },
        // The SQL one webhook delivery sends is captured here, as createPayment's is in the API.
        preload: ['./bench/lib/sql-capture.ts'],
        nodeFlags: cpuProfileFlags('worker'),
        ipc: true,
      });
      starting.push(this.worker.waitFor(/worker running/).then(() => undefined));
    }
    await Promise.all(starting);
  }

  /** The sandbox's own time per authorization since the last call, by attempt id (see sandbox-timing.ts). */
  async processorTimings(): Promise<Map<string, number>> {
    const { timings } = await this.sandbox!.request<{ timings: [string, number][] }>('timings');
    const byAttempt = new Map<string, number>();
    for (const [attemptId, ms] of timings) byAttempt.set(attemptId, (byAttempt.get(attemptId) ?? 0) + ms);
    return byAttempt;
  }

  /** `run`, with the API's event-loop delay and garbage-collection pauses meanwhile (bench/lib/runtime-probe.ts). */
  async probingApiRuntime<T>(run: () => Promise<T>): Promise<{ result: T; apiRuntime: ApiRuntime }> {
    await this.api!.request('runtime-start');
    const result = await run();
    const { id: _id, ...apiRuntime } = await this.api!.request<ApiRuntime & { id: number }>('runtime-stop');
    return { result, apiRuntime };
  }

  async count(query: string, values: unknown[] = []): Promise<number> {
    const { rows } = await this.sql.query<{ n: number }>(query, values);
    return Number(rows[0]!.n);
  }

  async close(): Promise<void> {
    const stops = [this.api, this.worker, this.sandbox].map((child) => child?.stop());
    await Promise.allSettled(stops);
    await this.context.db.$disconnect().catch(() => undefined);
    await this.context.cache.close();
    await this.sql.end().catch(() => undefined);
    await deleteKeysUnder(this.redis, this.prefix).catch((error: unknown) =>
      console.error(`bench: could not delete Redis keys under ${this.prefix}: ${(error as Error).message}`),
    );
    this.redis.disconnect();
    await this.database.drop();
  }
}
