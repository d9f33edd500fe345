// A task a worker runs every interval (the webhook reconciler, the payment expiry sweep): never two runs at
// once in one process, a failure logged and tried again next interval, and a stop that waits for the run.
// Every line a run logs carries the task's name and the run's id (request-scope.ts), as a request's carry its id.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { runInScope } from '../request-scope.ts';

export interface PeriodicTask {
  stop(): Promise<void>;
}

export function runEvery(intervalMs: number, task: () => Promise<void>, logger: Logger, name: string): PeriodicTask {
  let running: Promise<void> | null = null;
  const timer = setInterval(() => {
    running ??= runInScope({ log: { task: name, runId: randomUUID() } }, () =>
      task().catch((error: unknown) => logger.warn({ err: error }, `${name} failed; it runs again next interval`)),
    ).finally(() => {
      running = null;
    });
  }, intervalMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
