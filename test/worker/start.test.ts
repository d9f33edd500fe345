// A worker's start (src/main/worker-app.ts): its periodic tasks start once everything else has, each with a run
// at once (src/platform/queues/periodic.ts); a start that fails runs none of them. A sweep set to 0 never runs.
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, inject, it, vi } from 'vitest';
import { createLogger } from '../../src/platform/logger.ts';
import { startTestWorker } from '../support/worker.ts';

/** A debug logger and the names of the periodic tasks whose runs it has logged. */
function taskLog() {
  const tasks = new Set<string>();
  const logger = createLogger('debug', {
    write: (line: string) => {
      const task = (JSON.parse(line) as { task?: string }).task;
      if (task !== undefined) tasks.add(task);
    },
  });
  return { logger, tasks };
}

// Hourly, so any run seen is the one at start; the sweeps off, as in every test (test/support/api.ts): a sweep at
// start would act on the other tests' rows in the shared database. Their run at start is periodic.test.ts's.
const env = () => ({ REDIS_PREFIX: `${inject('redisPrefix')}_start_${randomBytes(3).toString('hex')}`, WEBHOOK_RECONCILE_INTERVAL_MS: '3600000' });

describe('a worker starting', () => {
  it('reconciles at once once started, and never sweeps with its sweeps set to 0', async () => {
    const { logger, tasks } = taskLog();
    const worker = await startTestWorker(env(), logger);
    try {
      await vi.waitFor(() => expect([...tasks]).toEqual(['webhook reconciler']), { timeout: 10_000, interval: 10 });
    } finally {
      await worker.close();
    }
    expect([...tasks]).toEqual(['webhook reconciler']);
  });

  it('runs none of its periodic tasks when its start fails (its metrics port taken)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { logger, tasks } = taskLog();
    try {
      const port = String((taken.address() as AddressInfo).port);
      // Closed at once should it start after all: its sweep would act on the suite's shared database.
      const start = await startTestWorker({ ...env(), WORKER_METRICS_PORT: port, PAYMENT_EXPIRY_SWEEP_MS: '3600000' }, logger).then(
        async (worker) => {
          await worker.close();
          return 'started';
        },
        (error: Error) => error.message,
      );
      expect(start).toMatch(/already in use/);
      expect([...tasks]).toEqual([]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
