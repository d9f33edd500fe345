// The webhooks queue (src/platform/queues/registry.ts): the outbox's relay (EventRelay), the worker's processor
// with the seed's retry schedule as a custom backoff strategy, and the reconciler that re-enqueues due deliveries
// that have no job (a Redis flush or restart, a relay that failed after commit). PostgreSQL holds the
// schedule; a job is only the alarm clock, so one lost or run twice changes nothing but timing.
import type { JobsOptions } from 'bullmq';
import type { Config } from '../../platform/config.ts';
import type { Database } from '../../platform/db/client.ts';
import { MAX_ATTEMPTS } from './retry-schedule.ts';
import type { Logger } from '../../platform/logger.ts';
import { JobQueue, registerProcessor } from '../../platform/queues/bullmq.ts';
import { runEvery, type PeriodicTask } from '../../platform/queues/periodic.ts';
import { inTraceOf } from '../../platform/tracing.ts';
import { queues } from '../../platform/queues/registry.ts';
import type { EventRelay, WrittenEvent } from './outbox.ts';
import { CLAIM_MARGIN_MS, type WebhookDeliveryService } from './delivery.ts';

const BACKOFF_TYPE = 'seed-schedule';

const JOB_OPTIONS: JobsOptions = {
  // Each retry is a BullMQ retry of the same job, delayed by the seed's table (docs/webhooks.md,
  // "Delivery and retries"; see `RetryLater`). PostgreSQL counts the schedule's attempts; the job's own
  // count only has to outlast them, a run per attempt that finds it not yet due (a worker's clock behind the
  // one that set its time: WebhookDeliveryService.notDue) and a few failed runs (the database briefly down),
  // so that the last retries never wait for the reconciler.
  attempts: 2 * MAX_ATTEMPTS + 20,
  backoff: { type: BACKOFF_TYPE },
  // The event row records everything; a finished job only has to free its id for a later re-enqueue.
  removeOnComplete: true,
  removeOnFail: true,
};

/** A failed delivery's way back into the queue: BullMQ retries the job after the schedule's delay. */
export class RetryLater extends Error {
  constructor(readonly delayMs: number) {
    super(`webhook delivery: next run in ${delayMs} ms`);
    this.name = 'RetryLater';
  }
}

export class WebhookQueue implements EventRelay {
  private readonly queue: JobQueue<typeof queues.webhooks.jobs>;

  constructor(config: Config, logger: Logger) {
    this.queue = new JobQueue(queues.webhooks, config, logger, JOB_OPTIONS);
  }

  async relay(event: WrittenEvent): Promise<void> {
    if (event.deliveryStatus === 'PENDING') await this.enqueue(event.id);
  }

  /** The job id is the event id: while a job for the event exists, adding another is a no-op. */
  async enqueue(eventId: string): Promise<void> {
    await this.queue.add('deliver', { eventId }, { jobId: eventId });
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

/** The worker side: runs due deliveries, and reconciles the queue with the outbox on an interval. */
export function startWebhookWorker(deps: { config: Config; logger: Logger; db: Database; delivery: WebhookDeliveryService; queue: WebhookQueue }) {
  const { config, logger, db, delivery, queue } = deps;
  const worker = registerProcessor(
    queues.webhooks,
    {
      deliver: async ({ eventId }) => {
        const outcome = await delivery.deliverDue(eventId);
        if (outcome.kind === 'retry') throw new RetryLater(outcome.delayMs);
      },
    },
    { config, logger },
    {
      concurrency: config.WEBHOOK_CONCURRENCY,
      // A live worker renews its lock every half of this; a job whose worker died is handed to another
      // worker once the lock runs out, when the event's claim (the same span) has run out too.
      lockDuration: config.WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS,
      stalledInterval: config.WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS,
      settings: {
        // The delay the delivery computed from the outbox (the seed's table, Retry-After); anything else
        // thrown (the database is down) is retried after a short pause.
        backoffStrategy: (_attemptsMade, _type, error) => (error instanceof RetryLater ? error.delayMs : 5_000),
      },
      isRetry: (error) => error instanceof RetryLater,
    },
  );

  /**
   * Due deliveries without a job get one; those with a job are left alone (the add is a no-op). A job added
   * here joins the trace of the change that recorded its event (docs/operations.md, "Tracing").
   */
  const reconcile = async () => {
    const due = await db.event.findMany({
      where: { deliveryStatus: 'PENDING', nextAttemptAt: { lte: new Date() } },
      select: { id: true, traceParent: true },
      orderBy: { nextAttemptAt: 'asc' },
      take: 1000,
    });
    for (const { id, traceParent } of due) await inTraceOf(traceParent, () => queue.enqueue(id));
  };
  let reconciler: PeriodicTask | null = null;
  return {
    ready: () => worker.waitUntilReady(),
    /** Starts the reconciler (its first pass at once): called once the worker process has started. */
    startReconciler: () => {
      reconciler ??= runEvery(config.WEBHOOK_RECONCILE_INTERVAL_MS, reconcile, logger, 'webhook reconciler');
    },
    close: async () => {
      await reconciler?.stop();
      await worker.close();
    },
  };
}
