// `npm run bench`: starts the service's processes on a fresh database and Redis prefix, measures each figure
// beside its ceiling measured in the same run, and writes bench/results.json (everything) and
// bench/results.md (the short table). Sizes come from BENCH_* variables (bench/lib/settings.ts); BENCH_ONLY
// runs some parts (routing, createPayment, createConfirm, routingOutcomes, webhooks, subscriptions; routing alone starts no
// stack). Whatever fails, every process it started is stopped and the database and the prefix's Redis keys are removed.
import { writeFile } from 'node:fs/promises';
import { benchCreateConfirm } from './create-confirm.ts';
import { benchCreatePayment } from './create-payment.ts';
import { finishMachineInfo, machineInfo } from './lib/machine.ts';
import { stopAll } from './lib/processes.ts';
import { markdown, type Results } from './lib/report.ts';
import { isPurePart, loadSettings, type Part, type PurePart } from './lib/settings.ts';
import { Stack } from './lib/stack.ts';
import { round } from './lib/stats.ts';
import { benchRouting } from './routing.ts';
import { benchRoutingOutcomes } from './routing-outcomes.ts';
import { benchSubscriptions } from './subscriptions.ts';
import { benchWebhooks } from './webhooks.ts';

const settings = loadSettings();
const started = performance.now();
const needsStack = !settings.parts.every(isPurePart);
console.log(`bench: parts ${settings.parts.join(', ')}${needsStack ? '; preparing a fresh database and Redis prefix' : ''}`);
const stack = needsStack ? await Stack.create(settings) : null;
// Room for stopping the processes and dropping the database after the last part.
if (stack) stack.deadline = started + (settings.budgetS - 15) * 1000;

let cleaned: Promise<void> | null = null;
const cleanup = () =>
  (cleaned ??= (async () => {
    await stack?.close().catch((error: unknown) => console.error(`bench: cleanup failed: ${(error as Error).message}`));
    await stopAll();
  })());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`bench: ${signal}, stopping its processes${stack ? ` and dropping ${stack.database.url}` : ''}`);
    void cleanup().then(() => process.exit(130));
  });
}

const pureParts: Record<PurePart, () => unknown> = { routing: benchRouting };
const stackParts: Record<Exclude<Part, PurePart>, (stack: Stack) => Promise<unknown>> = {
  createPayment: benchCreatePayment,
  createConfirm: benchCreateConfirm,
  routingOutcomes: benchRoutingOutcomes,
  subscriptions: benchSubscriptions,
  webhooks: benchWebhooks,
};

try {
  const machine = await machineInfo(stack, settings.pgbench);
  const results: Results = {
    benchmark: 'payments orchestrator: npm run bench',
    date: new Date().toISOString(),
    machine,
    settings: { ...settings, databaseServerUrl: undefined },
    wallSeconds: { total: 0, parts: {} },
    failures: {},
  };
  let processesStarted = false;
  for (const part of settings.parts) {
    // The processes start before the first part that needs them: the pure parts run first, on a quiet machine.
    if (stack && !processesStarted && !isPurePart(part)) {
      console.log('bench: starting the API, worker and sandbox processes');
      await stack.start({ sandboxLatencyMs: 0 });
      processesStarted = true;
    }
    const partStarted = performance.now();
    try {
      // `stack` exists whenever a part that is not pure was asked for (needsStack).
      (results as unknown as Record<string, unknown>)[part] = isPurePart(part) ? pureParts[part]() : await stackParts[part](stack!);
    } catch (error) {
      // The other parts still run; the failure is in the results and the exit code.
      console.error(`bench: ${part} failed: ${(error as Error).stack}`);
      results.failures[part] = (error as Error).message.slice(0, 4000);
      process.exitCode = 1;
    }
    results.wallSeconds.parts[part] = round((performance.now() - partStarted) / 1000, 1);
    console.log(`bench: ${part} took ${results.wallSeconds.parts[part]} s`);
  }
  finishMachineInfo(machine);
  results.wallSeconds.total = round((performance.now() - started) / 1000, 1);
  await writeFile(new URL('results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  const table = markdown(results);
  await writeFile(new URL('results.md', import.meta.url), table);
  console.log(`\n${table}`);
  console.log(`bench: wrote bench/results.json and bench/results.md in ${results.wallSeconds.total} s`);
} catch (error) {
  console.error(`bench: failed: ${(error as Error).stack}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
