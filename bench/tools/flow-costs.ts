// What one card payment (createPayment, then confirmPayment through the sandbox answering at once) costs the
// service at a fixed load, where `npm run bench` measures it at saturation and half of it (docs/benchmarks.md,
// "Profiling"). For each load: latency, the API's CPU per payment split into its own code (user) and the kernel's
// work for it (system: its system calls), PostgreSQL's commits and WAL flushes per payment, and, where strace is
// installed, the API's socket writes per payment by whom they go to (each a system call, and on loopback the
// receiver's wake-up too). strace slows what it traces, so the writes are counted in a short run of their own.
//   npx tsx bench/tools/flow-costs.ts [load ...]
// A load is `<n>u` (n users, each starting a payment when its last one ends) or `<n>` (n payments a second, started
// on schedule); by default 1u 50 130. BENCH_DURATION_S (8) and BENCH_WARMUP_S (2) apply as in the bench.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, warmUp, type LoadSpec } from '../lib/load.ts';
import { stopAll } from '../lib/processes.ts';
import { loadSettings } from '../lib/settings.ts';
import { Stack } from '../lib/stack.ts';
import { round } from '../lib/stats.ts';

const WRITE_COUNT_SECONDS = 4;

function loadOf(stack: Stack, text: string, durationS: number, warmupS: number): LoadSpec {
  const target = stack.target;
  const users = /^(\d+)u$/.exec(text);
  if (users) return { model: 'closed', target, operation: 'createConfirm', concurrency: Number(users[1]), durationS, warmupS };
  if (!/^\d+$/.test(text)) throw new Error(`load "${text}": give <n>u (n users) or <n> (payments a second)`);
  return { model: 'open', target, operation: 'createConfirm', ratePerS: Number(text), durationS, warmupS, maxInFlight: 256 };
}

/** PostgreSQL's commits in the bench's database and its WAL flushes (the server's, as few other databases write meanwhile). */
async function postgresCounts(stack: Stack): Promise<{ commits: number; walSyncs: number }> {
  const { rows } = await stack.sql.query<{ commits: string; wal_syncs: string }>(
    'SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits, (SELECT wal_sync FROM pg_stat_wal) AS wal_syncs',
  );
  return { commits: Number(rows[0]!.commits), walSyncs: Number(rows[0]!.wal_syncs) };
}

/**
 * The API's socket writes while `spec` runs, per payment, by peer: strace attached to its process (every thread),
 * each write's socket named with its addresses (-yy). Null when strace is not installed.
 */
async function socketWrites(stack: Stack, spec: LoadSpec): Promise<Record<string, number> | null> {
  if (spawnSync('strace', ['-V']).error) return null;
  const dir = mkdtempSync(join(tmpdir(), 'flow-costs-'));
  try {
    const output = join(dir, 'strace.txt');
    const strace = spawn('strace', ['-f', '-yy', '-e', 'trace=write,writev,sendto,sendmsg', '-p', String(stack.api!.pid), '-o', output], { stdio: 'ignore' });
    const stopped = new Promise((resolve) => strace.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // attached to every thread
    const result = await runLoad({ ...spec, durationS: WRITE_COUNT_SECONDS, warmupS: 0 });
    strace.kill('SIGINT');
    await stopped;
    const peers: [string, (socket: string) => boolean][] = [
      ['PostgreSQL', (socket) => socket.endsWith(`:${new URL(stack.config.DATABASE_URL).port || 5432}]`)],
      ['Redis', (socket) => socket.endsWith(`:${new URL(stack.config.REDIS_URL).port || 6379}]`)],
      ['HTTP answers', (socket) => socket.includes(`:${stack.apiPort}->`)],
      ['the sandbox', (socket) => socket.endsWith(`:${stack.sandboxPort}]`)],
    ];
    const writes: Record<string, number> = Object.fromEntries([...peers.map(([name]) => [name, 0]), ['other', 0]]);
    for (const line of readFileSync(output, 'utf8').split('\n')) {
      const socket = /^\d+\s+(?:write|writev|sendto|sendmsg)\(\d+<(TCP:\[[^\]]*\])>/.exec(line)?.[1];
      if (socket === undefined) continue;
      const peer = peers.find(([, matches]) => matches(socket))?.[0] ?? 'other';
      writes[peer]! += 1;
    }
    return Object.fromEntries(Object.entries(writes).map(([peer, count]) => [peer, round(count / Math.max(1, result.totalCompleted))]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const settings = loadSettings();
const loads = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['1u', '50', '130'];
const stack = await Stack.create(settings);
try {
  await stack.start({ sandboxLatencyMs: 0 });
  const specs = loads.map((text) => loadOf(stack, text, settings.durationS, settings.warmupS));
  // A process just started compiles its code over its first thousands of requests (bench/lib/load.ts, warmUp).
  await warmUp(loadOf(stack, '8u', settings.processWarmupS, 0), settings.processWarmupS);
  console.log(
    '| Load | Payments/s | p50 / p99 ms | API CPU per payment: user + system ms | PostgreSQL commits / WAL flushes per payment | API socket writes per payment |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const [index, spec] of specs.entries()) {
    const cpuBefore = stack.api!.cpuTimesMs();
    const pgBefore = await postgresCounts(stack);
    const result = await runLoad(spec);
    const cpuAfter = stack.api!.cpuTimesMs();
    const pgAfter = await postgresCounts(stack);
    // Divided by every payment the run completed, its warm-up's too, as the CPU was (bench/lib/load.ts).
    const per = (value: number) => round(value / Math.max(1, result.totalCompleted));
    const writes = await socketWrites(stack, spec);
    const cells = [
      loads[index],
      result.perSecond,
      `${result.latencyMs.p50} / ${result.latencyMs.p99}`,
      `${per(cpuAfter.userMs - cpuBefore.userMs)} + ${per(cpuAfter.systemMs - cpuBefore.systemMs)}`,
      `${per(pgAfter.commits - pgBefore.commits)} / ${per(pgAfter.walSyncs - pgBefore.walSyncs)}`,
      writes === null
        ? 'strace not installed'
        : Object.entries(writes)
            .map(([peer, count]) => `${peer} ${count}`)
            .join(', '),
    ];
    console.log(`| ${cells.join(' | ')} |`);
  }
} finally {
  await stack.close();
  await stopAll();
}
