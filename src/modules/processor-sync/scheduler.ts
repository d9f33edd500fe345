// The payments service's port to whatever runs delayed work (its jobs.ts implements it with BullMQ), so the
// service decides what is synced and when, and knows nothing of queues.
import type { JobData, queues } from '../../platform/queues/registry.ts';

type PaymentSyncQueue = typeof queues.paymentSync;

/** One scheduled sync: of this payment's attempt, the `step`-th of the schedule (modules/processor-sync/schedule.ts). */
export type PaymentSyncJob = JobData<PaymentSyncQueue, 'sync'>;

/** One scheduled sync of a refund or payout still waiting on its processor, on the same schedule as payments. */
export type ResourceSyncJob = JobData<PaymentSyncQueue, 'refund-sync' | 'payout-sync'>;

export interface PaymentSyncScheduler {
  /**
   * Runs `PaymentService.runScheduledSync(job)` after `paymentSyncDelayMs(job.step, scale)`. Scheduling
   * the same job twice runs it once; a job whose step has no delay is not scheduled.
   */
  schedule(job: PaymentSyncJob): Promise<void>;
  /** The same for a refund or payout: runs the `runScheduledSync(job)` of its service. */
  scheduleResource(job: ResourceSyncJob): Promise<void>;
}
