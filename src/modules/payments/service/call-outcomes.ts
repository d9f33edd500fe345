// What follows a processor call a payment's operation made (confirm, capture, void): a refusal or a
// decline turned into the caller's error, a payment left PROCESSING announced, and one left waiting on its
// processor put on the sync schedule.
import { ConnectorError, refusalCodeOf, type ProcessorPayment } from '../../connectors/port.ts';
import { AppError } from '../../../kernel/errors.ts';
import { transitionAttempt } from '../machine/attempt.ts';
import { AWAITING_PROCESSOR_INTENT_STATUSES } from '../machine/statuses.ts';
import type { Payment } from '../store.ts';
import type { PaymentDependencies } from './dependencies.ts';
import { errorFieldsOf, MAX_COMMIT_RETRIES } from './processor-answers.ts';

export class ProcessorCallOutcomes {
  constructor(private readonly deps: PaymentDependencies) {}

  /**
   * After a processor call about `sent` (its pending state, committed with no event): announced if it
   * rests in PROCESSING, then watched while it waits on its processor.
   */
  async settled(sent: Payment, result: Payment): Promise<Payment> {
    return this.watched(await this.announcedIfResting(sent, result));
  }

  /**
   * A payment the call left PROCESSING (the processor answered pending, or the call timed out) rests there:
   * that is news (payment_processing), written now. Anywhere else the answer's commit emitted the event of
   * where it landed; a process that died before it leaves that to the sync that resolves the payment. A void
   * after capture on its way stays quiet: the payment is paid until the void succeeds.
   */
  private async announcedIfResting(sent: Payment, result: Payment): Promise<Payment> {
    let payment = result;
    for (let conflicts = 0; ;) {
      const resting =
        payment.status === 'PROCESSING' && payment.activeAttempt.id === sent.activeAttempt.id && payment.activeAttempt.status !== 'VOID_POST_CHARGE_INITIATED';
      if (!resting) return payment;
      try {
        return await this.deps.store.commit(payment, { moves: [], announce: true, actor: 'processor' });
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
        // Moved meanwhile (a callback, a sync): announce what it rests in now, unless it moved on.
        if (++conflicts >= MAX_COMMIT_RETRIES) return payment;
        payment = await this.deps.store.get(sent.id);
      }
    }
  }

  /** Starts the sync schedule of a payment left waiting on its processor by the call that just returned. */
  private async watched(payment: Payment): Promise<Payment> {
    if (!AWAITING_PROCESSOR_INTENT_STATUSES.has(payment.status)) return payment;
    try {
      await this.deps.syncScheduler.schedule({ paymentId: payment.id, attemptId: payment.activeAttempt.id, step: 0 });
    } catch (error) {
      // The processor has acted and the state is committed: the caller must learn it. The payment stays
      // syncable (syncPayment, the redirect route); operators see the failure here and in /ready.
      this.deps.context.logger.error({ paymentId: payment.id, err: error }, 'could not schedule the sync of a payment waiting on its processor');
    }
    return payment;
  }

  /** A processor call that gave no answer: unknown outcome stays pending (sync resolves it); a refusal fails the step. */
  async afterConnectorError(payment: Payment, error: unknown, trigger: 'processor_call' | 'capture_at_processor' | 'void_at_processor'): Promise<Payment> {
    if (!(error instanceof ConnectorError)) throw error;
    this.deps.context.logger.warn({ paymentId: payment.id, kind: error.kind, err: error.message }, 'processor call failed');
    if (error.outcomeUnknown) return payment;
    // A refused void after capture leaves the charge as it was; every other refusal fails the step.
    const move =
      payment.activeAttempt.status === 'VOID_POST_CHARGE_INITIATED'
        ? transitionAttempt(payment.activeAttempt.status, 'void_refused')
        : transitionAttempt(payment.activeAttempt.status, trigger, { result: 'failure' });
    const connectorErrorFields = errorFieldsOf({ code: refusalCodeOf(error), processorCode: error.processorCode ?? null, message: error.message });
    const failed = await this.deps.store.commit(payment, {
      moves: [move],
      attempt: connectorErrorFields,
      intent: connectorErrorFields,
      actor: 'processor',
    });
    // A processor that answered "no" did not fail: its refusal is about this payment, so the caller gets a
    // 4xx to act on. Of an authorization (a bank, network or wallet it does not take), as a decline is: the
    // customer may pay another way. Of a capture or void, the payment's state at the processor forbids it
    // (the authorization lapsed, a refund holds part of it). Refused credentials are the merchant's setup.
    if (error.kind === 'rejected') {
      const processor = { processorCode: error.processorCode ?? null, processorMessage: error.message, paymentId: failed.id, status: failed.status };
      if (trigger === 'processor_call') {
        throw new AppError('PAYMENT_DECLINED', `The payment was declined: ${error.message}.`, {
          declineCode: connectorErrorFields.errorCode,
          declineMessage: error.message,
          ...processor,
        });
      }
      throw new AppError(
        'INVALID_STATE',
        `The processor refused the ${trigger === 'capture_at_processor' ? 'capture' : 'void'}: ${error.message}; the payment is ${failed.status}.`,
        processor,
      );
    }
    throw new AppError('CONNECTOR_ERROR', `The processor failed: ${error.message}.`, { paymentId: failed.id, status: failed.status });
  }

  /** A definite decline is an error for the caller (the payment is FAILED and stays queryable). */
  declinedOrResult(payment: Payment, answer: ProcessorPayment): Payment {
    if (payment.status === 'FAILED' && answer.error) {
      throw new AppError('PAYMENT_DECLINED', `The payment was declined: ${answer.error.message}`, {
        declineCode: answer.error.code,
        declineMessage: answer.error.message,
        processorCode: answer.error.processorCode,
        paymentId: payment.id,
        status: payment.status,
      });
    }
    return payment;
  }
}
