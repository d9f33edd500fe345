// Every queue (BullMQ, in Redis) and the kinds of job it holds, each with the schema of its data: the one
// list producers and workers share (src/platform/queues/bullmq.ts adds and runs jobs by it). Queue names,
// job names and data shapes are deployed state: a rolling deploy's new workers read the jobs the previous
// version wrote, so they change only with a migration of the jobs in Redis.
import { z } from 'zod';

/** The schemas of a queue's job kinds, by job name (BullMQ's `job.name`). */
export type JobSchemas = Record<string, z.ZodType>;

export interface QueueDefinition<Jobs extends JobSchemas> {
  readonly name: string;
  readonly jobs: Jobs;
}

export const defineQueue = <Jobs extends JobSchemas>(name: string, jobs: Jobs): QueueDefinition<Jobs> => ({ name, jobs });

/** The name of one of `Queue`'s job kinds. */
export type JobKind<Queue extends QueueDefinition<JobSchemas>> = keyof Queue['jobs'] & string;

/** The data of a job of kind `Kind` in `Queue`, as its schema accepts it. */
export type JobData<Queue extends QueueDefinition<JobSchemas>, Kind extends JobKind<Queue>> = z.infer<Queue['jobs'][Kind]>;

// The index of a step in the sync schedule (src/modules/processor-sync/schedule.ts).
const syncStep = z.number().int().nonnegative();

const resourceSyncJob = <Kind extends 'refund' | 'payout'>(kind: Kind) => z.object({ kind: z.literal(kind), id: z.string(), step: syncStep });

export const queues = {
  /** Scheduled syncs of what waits on its processor: payments (`sync`), refunds and payouts. */
  paymentSync: defineQueue('payment-sync', {
    sync: z.object({ paymentId: z.string(), attemptId: z.string(), step: syncStep }),
    'refund-sync': resourceSyncJob('refund'),
    'payout-sync': resourceSyncJob('payout'),
  }),
  /** Webhook deliveries: the alarm clock of an event whose delivery PostgreSQL schedules. */
  webhooks: defineQueue('webhooks', {
    deliver: z.object({ eventId: z.string() }),
  }),
};
