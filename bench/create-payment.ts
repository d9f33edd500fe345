// createPayment at a fixed concurrency, beside its two ceilings measured in the same run:
// - the same-shaped Yoga mutation with no I/O (bench/processes/bare-yoga.ts): what HTTP + GraphQL cost;
// - pgbench replaying the SQL the service sends for one createPayment (bench/sql/create-payment.pgbench),
//   at the same number of clients: what PostgreSQL allows for that work.
// Throughput: closed loop (autocannon, `concurrency` connections). Latency: open model at a fixed arrival
// rate below saturation (BENCH_OPEN_LOAD × the service's closed-loop rate), the same rate for the ceiling.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runLoad, runLoadMeasuringCpu, summaryOf, warmUp, type LoadResult, type Target } from './lib/load.ts';
import { Child, freePort } from './lib/processes.ts';
import type { ApiRuntime, Stack } from './lib/stack.ts';
import { ratio, round } from './lib/stats.ts';
import { CREATE_PAYMENT, createVariables } from './lib/operations.ts';

const PGBENCH_SCRIPT = fileURLToPath(new URL('sql/create-payment.pgbench', import.meta.url));

/** The no-I/O ceiling server, its processor wait set to `latencyMs`. */
export async function startBareYoga(latencyMs: number): Promise<{ child: Child; target: Target }> {
  const port = await freePort();
  const child = new Child('bare-yoga', 'bench/processes/bare-yoga.ts', {
    env: { PORT: String(port), BARE_LATENCY_MS: String(latencyMs), NODE_ENV: 'production' },
    ipc: true,
  });
  await child.waitFor(/bare yoga listening/);
  return { child, target: { url: `http://127.0.0.1:${port}`, secretKey: 'sk_test_bare', publishableKey: 'pk_test_bare' } };
}

export interface PgbenchResult {
  clients: number;
  transactionsPerSecond: number;
  latencyAverageMs: number;
  transactions: number;
  failed: number;
  error?: string;
}

/** pgbench with the createPayment script against the run's database, `clients` connections, `seconds` long. */
export async function runPgbench(stack: Stack, clients: number, seconds: number): Promise<PgbenchResult> {
  const { demo } = stack;
  return runPgbenchScript(stack, PGBENCH_SCRIPT, clients, ['-T', String(seconds)], {
    key_id: demo.secretKeyId,
    merchant_id: demo.merchantId,
    profile_id: demo.profileId,
    request_hash: 'f'.repeat(64),
    // As long as the sealed response the service stores for a createPayment.
    response_body: `v1.${'x'.repeat(560)}`,
  });
}

/**
 * pgbench running `script` with `clients` connections for `length` (-T seconds or -t transactions per client), its -D
 * `variables` set. In its prepared mode, as the service sends these statements: named prepared statements, parsed and
 * planned once per connection (src/platform/db/client.ts, PreparedStatements). Its extended mode plans every one again,
 * a cost the service does not pay: about half of each createPayment statement's time (0.52 to 0.69 ms prepared
 * against 1.04 to 1.34 ms extended, one client, docs/benchmarks.md).
 */
export async function runPgbenchScript(
  stack: Stack,
  script: string,
  clients: number,
  length: ['-T' | '-t', string],
  variables: Record<string, string>,
): Promise<PgbenchResult> {
  const args = ['-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(2, clients)), ...length, '-f', script];
  for (const [name, value] of Object.entries(variables)) args.push('-D', `${name}=${value}`);
  args.push(stack.database.url);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(stack.settings.pgbench, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`pgbench exited with ${code}:\n${text.slice(-3000)}`))));
  });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output);
  if (!tps) throw new Error(`pgbench printed no tps:\n${output.slice(-3000)}`);
  return {
    clients,
    transactionsPerSecond: round(Number(tps[1])),
    latencyAverageMs: Number(/latency average = ([\d.]+) ms/.exec(output)?.[1] ?? Number.NaN),
    transactions: Number(/number of transactions actually processed: (\d+)/.exec(output)?.[1] ?? Number.NaN),
    failed: Number(/number of failed transactions: (\d+)/.exec(output)?.[1] ?? 0),
  };
}

/** A statement as the drift check compares it: "SELECT business_profiles", and the columns it names in order. */
export interface StatementShape {
  name: string;
  columns: string[];
}

/**
 * The shape of a statement's text. Its columns are the quoted ones Prisma writes (select list, conditions,
 * SET, RETURNING) and the column lists of hand-written INSERTs: what a renamed or added column changes.
 */
export function statementShape(text: string): StatementShape {
  const statement = text.replace(/\s+/g, ' ').trim();
  const verb = /^(WITH|SELECT|INSERT INTO|UPDATE|DELETE FROM|BEGIN|COMMIT|ROLLBACK)\b/i.exec(statement)?.[1] ?? statement.slice(0, 30);
  // The first table it reads or writes, as Prisma quotes it or as hand-written SQL names it.
  const table = /(?:FROM|INTO|UPDATE) (?:"public"\.)?"?([a-z_]+)"?/.exec(statement)?.[1];
  // Prisma qualifies a column with its table ("public"."t"."c") and names the table alone after FROM or UPDATE.
  // A string literal's text (a JSON row's values, say) names no column.
  const unqualified = statement
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/"public"\."[a-z_]+"\.("[a-z_]+")/g, '$1')
    .replace(/"public"\."[a-z_]+"/g, '');
  const quoted = [...unqualified.matchAll(/"([a-z_]+)"/g)].map((match) => match[1]!);
  const inserted = [...statement.matchAll(/INSERT INTO [a-z_]+ \(([^)]*)\)/g)].flatMap((match) => match[1]!.split(',').map((column) => column.trim()));
  return { name: table ? `${verb} ${table}` : verb, columns: [...quoted, ...inserted] };
}

/** How the script's statements differ from the service's (which, in order, and their columns), or null if they do not. */
export function scriptDrift(service: StatementShape[], script: StatementShape[]): string | null {
  const names = (shapes: StatementShape[]) => shapes.map((shape) => shape.name).join(', ');
  if (names(service) !== names(script)) return `the service now sends ${names(service)}; the script replays ${names(script)}`;
  const differing = service.flatMap((sent, index) => {
    const replayed = script[index]!.columns;
    if (sent.columns.join() === replayed.join()) return [];
    const missing = sent.columns.filter((column) => !replayed.includes(column));
    const extra = replayed.filter((column) => !sent.columns.includes(column));
    return [
      `statement ${index + 1} (${sent.name}): columns the script lacks [${missing.join(', ')}], columns only the script names [${extra.join(', ')}]${missing.length + extra.length === 0 ? ', or in another order' : ''}`,
    ];
  });
  return differing.length > 0 ? differing.join('; ') : null;
}

/** The statements of a pgbench script (createPayment's by default), in order. */
export async function scriptStatements(script = PGBENCH_SCRIPT): Promise<StatementShape[]> {
  const lines = (await readFile(script, 'utf8')).split('\n');
  return lines.filter((line) => line.trim() && !line.startsWith('--') && !line.startsWith('\\')).map(statementShape);
}

/**
 * The statements one warm createPayment (with an Idempotency-Key) sends, captured in the API process: a first
 * request fills the read cache (docs/architecture.md, "Read cache"), as the bench's warm-up does.
 */
export async function captureStatements(stack: Stack): Promise<StatementShape[]> {
  const create = async (idempotencyKey: string) => {
    const response = await fetch(`${stack.apiUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': stack.demo.secretKey, 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ query: CREATE_PAYMENT, variables: createVariables() }),
    });
    await response.text();
  };
  await create(`warm-${stack.runId}`);
  await stack.api!.request('sql-capture-start');
  // Every statement of a keyed request is answered before the request is: its answer is kept before it is sent.
  await create(`capture-${stack.runId}`);
  const { statements } = await stack.api!.request<{ statements: string[] }>('sql-capture-stop');
  return statements.map(statementShape);
}

export async function benchCreatePayment(stack: Stack) {
  const { concurrency, durationS, warmupS, processWarmupS, openLoad } = stack.settings;
  await stack.start({ sandboxLatencyMs: 0 });
  const statements = await captureStatements(stack);
  const replayed = await scriptStatements();
  const drift = scriptDrift(statements, replayed);
  if (drift !== null) console.warn(`createPayment: bench/sql/create-payment.pgbench does not replay what the service sends: ${drift}`);

  console.log('createPayment: no-I/O Yoga ceiling, closed loop');
  const bare = await startBareYoga(0);
  let bareClosed: Awaited<ReturnType<typeof runLoadMeasuringCpu<'bareYoga'>>>;
  let bareOpen: LoadResult;
  let serviceClosed: Awaited<ReturnType<typeof runLoadMeasuringCpu<'api'>>>;
  let serviceOpen: LoadResult;
  let openRuntime: ApiRuntime;
  let rate: number;
  try {
    const bareLoad = { model: 'autocannon', target: bare.target, connections: concurrency, durationS, warmupS } as const;
    await warmUp(bareLoad, processWarmupS);
    bareClosed = await runLoadMeasuringCpu(bareLoad, { bareYoga: bare.child });
    console.log(`  ${bareClosed.perSecond} req/s`);

    console.log('createPayment: service, closed loop');
    const serviceLoad = { model: 'autocannon', target: stack.target, connections: concurrency, durationS, warmupS } as const;
    await warmUp(serviceLoad, processWarmupS);
    const before = await stack.count('SELECT count(*) AS n FROM payment_intents');
    serviceClosed = await runLoadMeasuringCpu(serviceLoad, { api: stack.api! });
    const created = (await stack.count('SELECT count(*) AS n FROM payment_intents')) - before;
    console.log(`  ${serviceClosed.perSecond} req/s (${created} payments written, warm-up included)`);

    rate = Math.max(1, Math.round(serviceClosed.perSecond * openLoad));
    console.log(`createPayment: service, open model at ${rate}/s`);
    ({ result: serviceOpen, apiRuntime: openRuntime } = await stack.probingApiRuntime(() =>
      runLoad({ model: 'open', target: stack.target, operation: 'createPayment', ratePerS: rate, durationS, warmupS, maxInFlight: concurrency * 8 }),
    ));
    console.log(`  p50 ${serviceOpen.latencyMs.p50} ms, p99 ${serviceOpen.latencyMs.p99} ms; API event-loop delay p99 ${openRuntime.eventLoopDelayMs.p99} ms`);
    console.log(`createPayment: no-I/O Yoga ceiling, open model at ${rate}/s`);
    bareOpen = await runLoad({
      model: 'open',
      target: bare.target,
      operation: 'createPayment',
      ratePerS: rate,
      durationS,
      warmupS,
      maxInFlight: concurrency * 8,
    });
    console.log(`  p50 ${bareOpen.latencyMs.p50} ms, p99 ${bareOpen.latencyMs.p99} ms`);
  } finally {
    await bare.child.stop();
  }

  console.log(`createPayment: pgbench, ${concurrency} clients`);
  // A ceiling that could not be measured (too many connections on a shared server, say) leaves its ratio empty.
  const pgbench = await runPgbench(stack, concurrency, durationS).catch((error: unknown): PgbenchResult => {
    console.warn(`  pgbench failed: ${(error as Error).message}`);
    return {
      clients: concurrency,
      transactionsPerSecond: Number.NaN,
      latencyAverageMs: Number.NaN,
      transactions: 0,
      failed: 0,
      error: (error as Error).message.slice(0, 2000),
    };
  });
  console.log(`  ${pgbench.transactionsPerSecond} tps`);

  return {
    concurrency,
    openRatePerS: rate,
    service: { closed: summaryOf(serviceClosed), open: summaryOf(serviceOpen), openApiRuntime: openRuntime },
    bareYoga: { closed: summaryOf(bareClosed), open: summaryOf(bareOpen) },
    pgbench,
    ratios: {
      throughputToBareYoga: ratio(serviceClosed.perSecond, bareClosed.perSecond),
      throughputToPgbench: ratio(serviceClosed.perSecond, pgbench.transactionsPerSecond),
      cpuPerRequestToBareYoga: ratio(serviceClosed.cpuMsPerOperation.api, bareClosed.cpuMsPerOperation.bareYoga),
      machineCpuPerRequestToBareYoga: ratio(serviceClosed.cpuMsPerOperation.machine, bareClosed.cpuMsPerOperation.machine),
      p99ClosedToBareYoga: ratio(serviceClosed.latencyMs.p99, bareClosed.latencyMs.p99),
      p50ToBareYoga: ratio(serviceOpen.latencyMs.p50, bareOpen.latencyMs.p50),
      p99ToBareYoga: ratio(serviceOpen.latencyMs.p99, bareOpen.latencyMs.p99),
    },
    sqlStatements: { service: statements.map((shape) => shape.name), pgbenchScript: replayed.map((shape) => shape.name), same: drift === null, drift },
  };
}
