// The payment sync worker in tests: started in this process, and a look at its queue as BullMQ sees it.
import { Queue, type Job } from 'bullmq';
import { expect, vi } from 'vitest';
import { loadConfig, type Config } from '../../src/platform/config.ts';
import { createLogger, type Logger } from '../../src/platform/logger.ts';
import type { PaymentSyncJob } from '../../src/modules/processor-sync/scheduler.ts';
import { PaymentSyncQueue, paymentSyncJobId } from '../../src/modules/processor-sync/jobs.ts';
import { queues } from '../../src/platform/queues/registry.ts';
import { startWorker, type WorkerApp } from '../../src/main/worker-app.ts';
import { testEnv } from './api.ts';

export async function startTestWorker(overrides: Record<string, string> = {}, logger?: Logger): Promise<WorkerApp> {
  const config = loadConfig(testEnv(overrides));
  return startWorker(config, logger ?? createLogger(config.LOG_LEVEL));
}

/** The payment sync queue of `config`'s Redis prefix, to read its jobs. */
export const inspectPaymentSyncQueue = (config: Config): Queue<PaymentSyncJob> =>
  new Queue(queues.paymentSync.name, { connection: { url: config.REDIS_URL }, prefix: config.REDIS_PREFIX });

/** Schedules `job` through the real queue and waits until a worker of `config`'s prefix has completed it. */
export async function scheduleAndAwaitCompletion(config: Config, job: PaymentSyncJob): Promise<Job<PaymentSyncJob>> {
  const scheduler = new PaymentSyncQueue(config, createLogger('silent'));
  const queue = inspectPaymentSyncQueue(config);
  try {
    await scheduler.schedule(job);
    return await vi.waitFor(
      async () => {
        // The state first, then the job: a job read before it completed would show its old attempt count.
        expect(await queue.getJobState(paymentSyncJobId(job))).toBe('completed');
        return (await queue.getJob(paymentSyncJobId(job)))!;
      },
      { timeout: 10_000, interval: 50 },
    );
  } finally {
    await queue.close();
    await scheduler.close();
  }
}
