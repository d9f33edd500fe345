// One step of the sync schedule of a payment, refund or payout (run by the worker): while the resource still
// waits on its processor, sync it and schedule the next step; when the schedule has run out, flag it for the
// merchant.
import { ConnectorError } from '../connectors/port.ts';
import { AppError } from '../../kernel/errors.ts';
import { paymentSyncDelayMs } from './schedule.ts';
import type { Logger } from '../../platform/logger.ts';
import type { PaymentSyncScheduler, ResourceSyncJob } from './scheduler.ts';

/** Which resource a step syncs (`kind` names it in the logs) and which step of the schedule it is. */
export interface SyncStep {
  kind: 'payment' | 'refund' | 'payout';
  id: string;
  step: number;
}

export interface SyncedResource<Row extends object> {
  load(id: string): Promise<Row | null>;
  isOpen(row: Row): boolean;
  /** Asks the processor; a CONNECTOR_ERROR is logged and the schedule goes on. */
  sync(row: Row): Promise<Row>;
  scheduleStep(step: number): Promise<void>;
  flagExhausted(id: string): Promise<void>;
}

export async function runSyncStep<Row extends object>(job: SyncStep, resource: SyncedResource<Row>, logger: Logger): Promise<void> {
  const found = await resource.load(job.id);
  if (found === null || !resource.isOpen(found)) return;
  let row = found;
  try {
    row = await resource.sync(found);
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'CONNECTOR_ERROR')) throw error;
    logger.warn({ [`${job.kind}Id`]: job.id, step: job.step, err: error.message }, `scheduled ${job.kind} sync could not reach the processor`);
  }
  if (!resource.isOpen(row)) return;
  const next = job.step + 1;
  if (paymentSyncDelayMs(next, 1) !== null) return resource.scheduleStep(next);
  await resource.flagExhausted(job.id);
  logger.warn({ [`${job.kind}Id`]: job.id }, `${job.kind} still waits on its processor after the last scheduled sync`);
}

/** Starts the schedule of a resource the call that just returned left open; a failure to schedule is logged, not thrown. */
export async function watchOpen(job: Omit<ResourceSyncJob, 'step'>, scheduler: PaymentSyncScheduler, logger: Logger): Promise<void> {
  try {
    await scheduler.scheduleResource({ ...job, step: 0 });
  } catch (error) {
    // The resource is committed and the processor has it: the caller must learn it; a manual sync still works.
    logger.error({ [`${job.kind}Id`]: job.id, err: error }, `could not schedule the sync of a ${job.kind} waiting on its processor`);
  }
}

/**
 * Asks the processor for a resource's current state: by its id there, or (a call that timed out left none)
 * by our reference; null when it has none. A processor that cannot be asked is CONNECTOR_ERROR.
 */
export async function askProcessor<Answer>(
  processorId: string | null,
  byId: (id: string) => Promise<Answer>,
  byReference: () => Promise<Answer | null>,
): Promise<Answer | null> {
  try {
    return processorId !== null ? await byId(processorId) : await byReference();
  } catch (error) {
    if (error instanceof ConnectorError) throw new AppError('CONNECTOR_ERROR', `The processor could not be asked: ${error.message}.`);
    throw error;
  }
}
