// The worker role: runs the scheduled payment syncs and the webhook deliveries (with their reconciler). Any
// number of worker processes may share the queues; BullMQ hands each job to one of them.
import { Worker } from 'bullmq';
import type { Config } from '../platform/config.ts';
import { checkPostgres, checkRedis } from '../platform/db/reachability.ts';
import type { Logger } from '../platform/logger.ts';
import { createServiceContext } from './service-context.ts';
import { createServices } from '../modules/services.ts';
import type { PaymentSyncJob, ResourceSyncJob } from '../modules/processor-sync/scheduler.ts';
import { createAdapters } from './adapters.ts';
import { PAYMENT_SYNC_JOB_NAME, PAYMENT_SYNC_QUEUE } from '../modules/processor-sync/jobs.ts';
import { runEvery } from '../platform/queues/periodic.ts';
import { startWebhookWorker } from '../modules/events/jobs.ts';

export interface WorkerApp {
  close: () => Promise<void>;
}

export async function startWorker(config: Config, logger: Logger): Promise<WorkerApp> {
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  const context = createServiceContext(config, logger);
  // Each step that leaves the payment waiting schedules the next one through the same queue.
  const adapters = createAdapters(config, logger);
  const services = createServices(context, adapters);
  const webhooks = startWebhookWorker({ config, logger, db: context.db, delivery: services.webhookDelivery, queue: adapters.webhookQueue });
  const worker = new Worker<PaymentSyncJob | ResourceSyncJob>(
    PAYMENT_SYNC_QUEUE,
    (job) => {
      if (job.name === PAYMENT_SYNC_JOB_NAME) return services.payments.runScheduledSync(job.data as PaymentSyncJob);
      const resource = job.data as ResourceSyncJob;
      return (resource.kind === 'refund' ? services.refunds : services.payouts).runScheduledSync(resource);
    },
    {
    // A worker's blocking connection must wait out Redis outages rather than fail its commands.
    connection: { url: config.REDIS_URL, maxRetriesPerRequest: null },
    prefix: config.REDIS_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    },
  );
  // The job id names the payment, attempt and step; the job's data holds nothing more.
  worker.on('failed', (job, error) => logger.error({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: error }, 'payment sync job failed'));
  worker.on('error', (error) => logger.warn({ err: error }, 'payment sync worker: redis error'));
  // Unconfirmed payments past their session expiry (any worker may sweep; the version guard settles races).
  const expirySweep = runEvery(config.PAYMENT_EXPIRY_SWEEP_MS, async () => void (await services.payments.expireDue(500)), logger, 'payment expiry sweep');
  // Subscriptions whose next period is due (a lease per subscription keeps two workers from charging one).
  const subscriptionSweep = runEvery(config.SUBSCRIPTION_SWEEP_MS, async () => void (await services.subscriptions.chargeDue(100)), logger, 'subscription sweep');
  await Promise.all([worker.waitUntilReady(), webhooks.ready()]);
  return {
    close: async () => {
      await expirySweep.stop();
      await subscriptionSweep.stop();
      await worker.close(); // takes no new job and lets the running ones finish
      await webhooks.close();
      await adapters.close();
      await context.db.$disconnect();
    },
  };
}
