// The registry's queues on BullMQ, with the Redis of the config (REDIS_URL, REDIS_PREFIX): a typed producer,
// and the one way a worker runs a queue's jobs, each job's data parsed by its kind's schema first.
import { Queue, UnrecoverableError, Worker, type Job, type JobsOptions, type WorkerOptions } from 'bullmq';
import { SpanKind } from '@opentelemetry/api';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { runInScope } from '../request-scope.ts';
import type { JobSchemas, QueueDefinition } from './registry.ts';
import { deserializedTraceContext, inSpan, serializedTraceContext, tracingEnabled } from '../tracing.ts';

/** How long closing a queue waits for its connection to finish starting. */
const START_WAIT_ON_CLOSE_MS = 5_000;

/** A job's own options; the rest (attempts, backoff, removal) are the queue's defaults. */
type AddOptions = Pick<JobsOptions, 'jobId' | 'delay'>;

/** Adds jobs of the kinds `queue` defines, with the data their schemas describe. */
export class JobQueue<Jobs extends JobSchemas> {
  private readonly queue: Queue;

  constructor(definition: QueueDefinition<Jobs>, config: Config, logger: Logger, defaultJobOptions: JobsOptions) {
    this.queue = new Queue(definition.name, {
      // Adding fails fast while Redis is unreachable instead of hanging its caller (a request that schedules
      // a sync, the outbox's relay whose reconciler adds the job later).
      connection: { url: config.REDIS_URL, maxRetriesPerRequest: 1, enableOfflineQueue: false },
      prefix: config.REDIS_PREFIX,
      defaultJobOptions,
    });
    this.queue.on('error', (error) => logger.warn({ err: error }, `${definition.name} queue: redis error`));
  }

  async add<Kind extends keyof Jobs & string>(kind: Kind, data: z.infer<Jobs[Kind]>, options: AddOptions): Promise<void> {
    await this.traced(kind, (telemetry) => this.queue.add(kind, data, { ...options, telemetry }));
  }

  /** Many jobs of one kind in one round trip (a backlog). */
  async addBulk<Kind extends keyof Jobs & string>(kind: Kind, jobs: { data: z.infer<Jobs[Kind]>; options: AddOptions }[]): Promise<void> {
    await this.traced(kind, (telemetry) => this.queue.addBulk(jobs.map(({ data, options }) => ({ name: kind, data, opts: { ...options, telemetry } }))));
  }

  /**
   * When tracing, adds in a producer span whose context the jobs carry in their options (BullMQ stores
   * `telemetry.metadata` with the job), so that the worker's span of each job is its child (docs/operations.md).
   */
  private traced<T>(kind: string, add: (telemetry: JobsOptions['telemetry']) => Promise<T>): Promise<T> {
    if (!tracingEnabled()) return add(undefined);
    return inSpan(`send ${this.queue.name}`, { kind: SpanKind.PRODUCER, attributes: messagingAttributes(this.queue.name, kind) }, () =>
      add({ metadata: serializedTraceContext() }),
    );
  }

  /**
   * Closes the queue once its connection has finished starting (or after `closeWaitMs` if Redis does not
   * answer): BullMQ 5.81 closing a connection mid-start rejects its start after removing the listener that
   * handles that rejection, an unhandled rejection that ends the process.
   */
  async close(): Promise<void> {
    const started = this.queue.waitUntilReady().catch(() => undefined);
    await Promise.race([started, delay(START_WAIT_ON_CLOSE_MS, undefined, { ref: false })]);
    await this.queue.close();
  }
}

/** What runs each kind of job of a queue, given the job's data as its schema parsed it. */
export type JobHandlers<Jobs extends JobSchemas> = { [Kind in keyof Jobs]: (data: z.infer<Jobs[Kind]>) => Promise<unknown> };

export type ProcessorOptions = Pick<WorkerOptions, 'concurrency' | 'lockDuration' | 'stalledInterval' | 'settings'> & {
  /** A failure that is the handler's way of asking for a retry, not worth an error in the log. */
  isRetry?: (error: Error) => boolean;
};

/**
 * Runs `queue`'s jobs in this process with `handlers`. A job whose name has no handler, or whose data its
 * kind's schema rejects, fails at once without retries and is logged: it is never run on data of another shape.
 */
export function registerProcessor<Jobs extends JobSchemas>(
  queue: QueueDefinition<Jobs>,
  handlers: JobHandlers<Jobs>,
  { config, logger }: { config: Config; logger: Logger },
  { isRetry = () => false, ...options }: ProcessorOptions = {},
): Worker<unknown> {
  const worker = new Worker<unknown>(
    queue.name,
    (job) => {
      if (!isKindOf(queue.jobs, job.name)) throw new UnrecoverableError(`${queue.name} has no job kind named "${job.name}"`);
      // Every log line the job writes carries its queue and id, which names what it is about (request-scope.ts).
      return runInScope({ log: { queue: queue.name, jobId: job.id } }, () => {
        if (!tracingEnabled()) return runKind(queue, handlers, job.name, job);
        // The job's span continues the trace of the request (or run) that added it.
        const attributes = {
          ...messagingAttributes(queue.name, job.name),
          'messaging.message.id': job.id ?? '',
          'messaging.bullmq.attempts_made': job.attemptsMade,
        };
        return inSpan(`process ${queue.name}`, { kind: SpanKind.CONSUMER, attributes, parent: deserializedTraceContext(job.opts.telemetry?.metadata) }, () =>
          runKind(queue, handlers, job.name, job),
        );
      });
    },
    {
      // A worker's blocking connection must wait out Redis outages rather than fail its commands.
      connection: { url: config.REDIS_URL, maxRetriesPerRequest: null },
      prefix: config.REDIS_PREFIX,
      concurrency: config.WORKER_CONCURRENCY,
      ...options,
    },
  );
  // The job id names what the job is about (a payment's attempt and step, an event).
  worker.on('failed', (job, error) => {
    if (!isRetry(error))
      logger.error({ queue: queue.name, jobName: job?.name, jobId: job?.id, attemptsMade: job?.attemptsMade, err: error }, `${queue.name} job failed`);
  });
  worker.on('error', (error) => logger.warn({ err: error }, `${queue.name} worker: redis error`));
  return worker;
}

/** OpenTelemetry's messaging attributes of a queue's job kind. */
const messagingAttributes = (queueName: string, kind: string) => ({
  'messaging.system': 'bullmq',
  'messaging.destination.name': queueName,
  'messaging.bullmq.job.name': kind,
});

const isKindOf = <Jobs extends JobSchemas>(jobs: Jobs, name: string): name is keyof Jobs & string => Object.hasOwn(jobs, name);

function runKind<Jobs extends JobSchemas, Kind extends keyof Jobs & string>(
  queue: QueueDefinition<Jobs>,
  handlers: JobHandlers<Jobs>,
  kind: Kind,
  job: Job<unknown>,
) {
  const schema: Jobs[Kind] = queue.jobs[kind];
  const parsed = z.safeParse(schema, job.data);
  if (!parsed.success)
    throw new UnrecoverableError(`${queue.name} job ${kind} ${job.id}: its data does not match the schema: ${z.prettifyError(parsed.error)}`);
  return handlers[kind](parsed.data);
}
