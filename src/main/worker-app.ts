// The worker role: runs the scheduled payment syncs and the webhook deliveries (with their reconciler). Any
// number of worker processes may share the queues; BullMQ hands each job to one of them.
import type { Config } from '../platform/config.ts';
import { checkPostgres, checkRedis } from '../platform/db/reachability.ts';
import type { Logger } from '../platform/logger.ts';
import { createServiceContext } from './service-context.ts';
import { createServices } from '../modules/services.ts';
import { createAdapters } from './adapters.ts';
import { registerProcessor } from '../platform/queues/bullmq.ts';
import { runEvery } from '../platform/queues/periodic.ts';
import { queues } from '../platform/queues/registry.ts';
import { startWebhookWorker } from '../modules/events/index.ts';
import { serveMetrics } from '../platform/http/metrics-server.ts';

export interface WorkerApp {
  /** Where this process's Prometheus metrics are served (WORKER_METRICS_PORT). */
  metricsUrl: string;
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
  const worker = registerProcessor(
    queues.paymentSync,
    {
      sync: (job) => services.payments.runScheduledSync(job),
      'refund-sync': (job) => services.refunds.runScheduledSync(job),
      'payout-sync': (job) => services.payouts.runScheduledSync(job),
    },
    { config, logger },
  );
  // Unconfirmed payments past their session expiry (any worker may sweep; the version guard settles races).
  const expirySweep = runEvery(config.PAYMENT_EXPIRY_SWEEP_MS, async () => void (await services.payments.expireDue(500)), logger, 'payment expiry sweep');
  // Subscriptions whose next period is due (a lease per subscription keeps two workers from charging one).
  const subscriptionSweep = runEvery(
    config.SUBSCRIPTION_SWEEP_MS,
    async () => void (await services.subscriptions.chargeDue(100)),
    logger,
    'subscription sweep',
  );
  await Promise.all([worker.waitUntilReady(), webhooks.ready()]);
  const metricsServer = await serveMetrics(context.metrics, config.WORKER_METRICS_PORT, config.HOST);
  return {
    metricsUrl: metricsServer.url,
    close: async () => {
      await metricsServer.close();
      await expirySweep.stop();
      await subscriptionSweep.stop();
      await worker.close(); // takes no new job and lets the running ones finish
      await webhooks.close();
      await adapters.close();
      await context.db.$disconnect();
      await context.cache.close();
    },
  };
}
