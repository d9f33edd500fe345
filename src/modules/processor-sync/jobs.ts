// The payment-sync queue (src/platform/queues/registry.ts) as PaymentService's PaymentSyncScheduler port. The
// API process adds a payment's first step; workers run each step, and the service adds the next one from there.
import type { JobsOptions } from 'bullmq';
import type { Config } from '../../platform/config.ts';
import { JobQueue } from '../../platform/queues/bullmq.ts';
import { queues, type JobData, type JobKind } from '../../platform/queues/registry.ts';
import { paymentSyncDelayMs } from './schedule.ts';
import type { Logger } from '../../platform/logger.ts';
import type { PaymentSyncJob, PaymentSyncScheduler, ResourceSyncJob } from './scheduler.ts';

/** One id per step of one attempt, so scheduling it again adds nothing (BullMQ refuses ':' in custom ids). */
export const paymentSyncJobId = (job: PaymentSyncJob): string => `${job.paymentId}.${job.attemptId}.${job.step}`;

const DAY_SECONDS = 24 * 60 * 60;

const JOB_OPTIONS: JobsOptions = {
  // A step whose handler throws (the database is down) is tried again after 5 s, 10 s, 20 s, … about 10 min in all.
  attempts: 8,
  backoff: { type: 'exponential', delay: 5_000 },
  // A completed step is kept for a day so that scheduling it again meanwhile stays a no-op; failed ones a
  // week for inspection. Both bounded in number.
  removeOnComplete: { age: DAY_SECONDS, count: 10_000 },
  removeOnFail: { age: 7 * DAY_SECONDS, count: 10_000 },
};

export class PaymentSyncQueue implements PaymentSyncScheduler {
  private readonly queue: JobQueue<typeof queues.paymentSync.jobs>;

  constructor(
    private readonly config: Config,
    logger: Logger,
  ) {
    this.queue = new JobQueue(queues.paymentSync, config, logger, JOB_OPTIONS);
  }

  schedule(job: PaymentSyncJob): Promise<void> {
    return this.add('sync', job, paymentSyncJobId(job));
  }

  scheduleResource(job: ResourceSyncJob): Promise<void> {
    return this.add(`${job.kind}-sync`, job, `${job.id}.${job.step}`);
  }

  private async add<Kind extends JobKind<typeof queues.paymentSync>>(kind: Kind, job: JobData<typeof queues.paymentSync, Kind>, jobId: string): Promise<void> {
    const delay = paymentSyncDelayMs(job.step, this.config.PAYMENT_SYNC_DELAY_SCALE);
    if (delay === null) return;
    await this.queue.add(kind, job, { jobId, delay });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
