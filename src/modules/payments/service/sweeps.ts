// The payments work the worker runs on a schedule: a step of a payment's sync schedule, and the sweep that
// expires unconfirmed payments whose session expiry has passed.
import { AppError } from '../../../kernel/errors.ts';
import { transitionAttempt } from '../machine/attempt.ts';
import { AWAITING_PROCESSOR_INTENT_STATUSES, UNCONFIRMED_INTENT_STATUSES } from '../machine/statuses.ts';
import type { Payment, PaymentStore } from '../store.ts';
import type { PaymentSyncJob } from '../../processor-sync/index.ts';
import { runSyncStep } from '../../processor-sync/index.ts';
import type { PaymentDependencies } from './dependencies.ts';
import type { ProcessorAnswers } from './processor-answers.ts';

export class PaymentSweeps {
  constructor(
    private readonly deps: PaymentDependencies,
    private readonly answers: ProcessorAnswers,
  ) {}

  /**
   * One step of the sync schedule (run by the worker): syncs a payment still waiting on its processor, then
   * schedules the next step, or flags the payment for the merchant when the schedule has run out. A payment
   * that moved on (final, or retried on another attempt, which has its own schedule) ends the chain.
   */
  runScheduledSync(job: PaymentSyncJob): Promise<void> {
    return runSyncStep(
      { kind: 'payment', id: job.paymentId, step: job.step },
      {
        load: (id) => this.deps.store.find(id),
        isOpen: (payment) => payment.activeAttempt.id === job.attemptId && AWAITING_PROCESSOR_INTENT_STATUSES.has(payment.status),
        sync: (payment) => this.answers.syncPayment(payment, 'scheduled_sync'),
        scheduleStep: (step) => this.deps.syncScheduler.schedule({ ...job, step }),
        flagExhausted: (id) => this.deps.store.markSyncExhausted(id),
      },
      this.deps.context.logger,
    );
  }

  /**
   * Expires the unconfirmed payments whose session expiry has passed, at most `limit` of them (run by the
   * worker's sweep); returns how many it expired. A payment confirmed meanwhile is left alone.
   */
  async expireDue(limit: number, now = new Date()): Promise<number> {
    const due = await this.deps.context.db.paymentIntent.findMany({
      where: { status: { in: [...UNCONFIRMED_INTENT_STATUSES] }, expiresAt: { lte: now } },
      select: { id: true },
      orderBy: { expiresAt: 'asc' },
      take: limit,
    });
    let expired = 0;
    for (const { id } of due) {
      const payment = await expiredOrAsIs(this.deps.store, await this.deps.store.get(id), now).catch((error: unknown) => {
        // Confirmed or expired by someone else a moment ago: nothing to do.
        if (error instanceof AppError && (error.code === 'CONFLICT' || error.code === 'INVALID_STATE')) return null;
        throw error;
      });
      if (payment?.status === 'EXPIRED') expired += 1;
    }
    return expired;
  }
}

/** `payment`, expired first if it is unconfirmed and its session expiry has passed (payment_expired). */
export async function expiredOrAsIs(store: PaymentStore, payment: Payment, now = new Date()): Promise<Payment> {
  if (!UNCONFIRMED_INTENT_STATUSES.has(payment.status) || payment.expiresAt === null || payment.expiresAt > now) return payment;
  const error = { errorCode: 'payment_expired', errorMessage: 'The payment was not confirmed within its session expiry.' };
  return store.commit(payment, { moves: [transitionAttempt(payment.activeAttempt.status, 'expire')], attempt: error, intent: error, actor: 'expiry' });
}
