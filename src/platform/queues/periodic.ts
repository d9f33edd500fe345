// A task a worker runs at start and then every interval (the webhook reconciler, the payment expiry and
// subscription sweeps): never two runs at once in one process, a failure logged and tried again next interval, and
// a stop that waits for the run. Every line a run logs carries the task's name and the run's id (request-scope.ts),
// as a request's carry its id.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { runInScope } from '../request-scope.ts';

export interface PeriodicTask {
  stop(): Promise<void>;
}

/**
 * Runs `task` at once, then every `intervalMs`. The first run is not an interval late: a worker that has just
 * started (a deploy, a crash's restart) picks up the first batch of what fell due while none ran, and pays its first
 * queries' cost (Prisma compiles a query shape on its first use) as it starts rather than under load an interval later.
 */
export function runEvery(intervalMs: number, task: () => Promise<void>, logger: Logger, name: string): PeriodicTask {
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= runInScope({ log: { task: name, runId: randomUUID() } }, () => {
      logger.debug(`${name} runs`);
      // Through a promise, so that a task that throws before its first await is logged like one that rejects.
      return Promise.resolve()
        .then(task)
        .catch((error: unknown) => logger.warn({ err: error }, `${name} failed; it runs again next interval`));
    }).finally(() => {
      running = null;
    });
  };
  run();
  const timer = setInterval(run, intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
