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
  const closeContext = [() => context.db.$disconnect(), () => context.cache.close()];
  /** After a failed start: closes what it opened (`steps`), then throws the start's own error. */
  const abandonStart = async (error: unknown, steps: CloseStep[]): Promise<never> => {
    await closeEach(steps).catch((closeError: unknown) => logger.warn({ err: closeError }, 'closing a worker that failed to start failed'));
    throw error;
  };
  // The step most likely to fail (its port taken) comes before any job can be taken.
  const metricsServer = await serveMetrics(context.metrics, config.WORKER_METRICS_PORT, config.HOST).catch((error: unknown) =>
    abandonStart(error, closeContext),
  );
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
  /** Stops taking jobs (both queues at once), lets the running ones finish, then closes every connection. */
  const releaseSteps: CloseStep[] = [
    () => Promise.all([worker.close(), webhooks.close()]),
    () => adapters.close(),
    () => metricsServer.close(),
    ...closeContext,
  ];
  await Promise.all([worker.waitUntilReady(), webhooks.ready()]).catch((error: unknown) => abandonStart(error, releaseSteps));
  // The periodic tasks start last, each with a first run at once (periodic.ts): a start that fails has run none of
  // them, so the exit that follows cannot cut a sweep's charge short. A sweep set to 0 is left to other workers.
  webhooks.startReconciler();
  const sweepEvery = (intervalMs: number, task: () => Promise<void>, name: string) => (intervalMs === 0 ? null : runEvery(intervalMs, task, logger, name));
  const sweeps = [
    // Unconfirmed payments past their session expiry (any worker may sweep; the version guard settles races).
    sweepEvery(config.PAYMENT_EXPIRY_SWEEP_MS, async () => void (await services.payments.expireDue(500)), 'payment expiry sweep'),
    // Subscriptions whose next period is due (a lease per subscription keeps two workers from charging one).
    sweepEvery(config.SUBSCRIPTION_SWEEP_MS, async () => void (await services.subscriptions.chargeDue(100)), 'subscription sweep'),
  ];
  return {
    metricsUrl: metricsServer.url,
    close: async () => {
      // No sweep starts while another is awaited: every timer is cleared before any run is waited for.
      await Promise.all(sweeps.map((sweep) => sweep?.stop()));
      await closeEach(releaseSteps);
    },
  };
}

type CloseStep = () => Promise<unknown>;

/** Runs each step whatever the ones before it did, so one that fails leaves nothing after it open; the failures are thrown together. */
async function closeEach(steps: readonly CloseStep[]): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) await step().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw new AggregateError(failures, 'closing the worker failed');
}
