// Capturing and cancelling a payment: the capture of an authorization, the cancel of a payment that is
// not paid (a void at the processor once authorized), and the void of a captured one.
import { AppError, invalidInput } from '../../../kernel/errors.ts';
import { CONNECTORS, isConnectorName } from '../../connectors/index.ts';
import type { SecretKeyPrincipal } from '../../../kernel/principal.ts';
import { parseInput } from '../../../kernel/validation.ts';
import { transitionAttempt, type AttemptTransition } from '../machine/attempt.ts';
import type { AttemptStatus } from '../machine/statuses.ts';
import { cancelPaymentInput, capturePaymentInput } from '../inputs.ts';
import type { Payment } from '../store.ts';
import type { ProcessorCallOutcomes } from './call-outcomes.ts';
import type { PaymentDependencies } from './dependencies.ts';
import type { ProcessorAnswers } from './processor-answers.ts';
import { capturedSplit, sentSplitOf } from './pass-through.ts';
import type { PaymentReads } from './reads.ts';

/** Attempt statuses in which the customer is in the middle of 3DS (or a redirect) at the processor. */
const AWAITING_CUSTOMER: ReadonlySet<AttemptStatus> = new Set(['DEVICE_DATA_COLLECTION_PENDING', 'AUTHENTICATION_PENDING']);

export class PaymentCaptures {
  constructor(
    private readonly deps: PaymentDependencies,
    private readonly reads: PaymentReads,
    private readonly answers: ProcessorAnswers,
    private readonly outcomes: ProcessorCallOutcomes,
  ) {}

  async capture(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(capturePaymentInput, rawInput);
    const payment = await this.reads.getVisible(principal, input.paymentId);
    const move = transitionAttempt(payment.activeAttempt.status, 'capture');
    const capturable = payment.activeAttempt.amountCapturable;
    const amount = input.amountToCapture ?? capturable;
    if (amount < 1 || amount > capturable) throw invalidInput('amountToCapture', `must be between 1 and the capturable amount ${capturable}`);
    const initiated = await this.deps.store.commit(payment, { moves: [move], actor: principal.keyId });
    const connector = await this.answers.connectorOf(initiated);
    const charged = initiated.amount + initiated.surchargeAmount;
    const sent = sentSplitOf(initiated.activeAttempt);
    // Less than charged: the shares authorization fixed are paid of what is captured, as the ledger shares it.
    const split = sent !== undefined && amount < charged ? capturedSplit(initiated, sent, amount) : undefined;
    try {
      const answer = await connector.capture(initiated.activeAttempt.connectorTransactionId!, amount, `${initiated.activeAttempt.id}_capture`, {
        currency: initiated.currency,
        charged,
        reference: initiated.activeAttempt.id,
        ...(split === undefined ? {} : { split }),
      });
      return this.outcomes.settled(initiated, this.outcomes.declinedOrResult(await this.answers.applyCallAnswer(initiated, answer), answer));
    } catch (error) {
      return this.outcomes.settled(initiated, await this.outcomes.afterConnectorError(initiated, error, 'capture_at_processor'));
    }
  }

  /**
   * Cancels a payment that is not paid: before confirm or during 3DS here only (the seed: such a payment is
   * not voided at the processor), an authorization by a void at the processor. Never a payment that took
   * money: that is cancelPostCapture's.
   */
  async cancel(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(cancelPaymentInput, rawInput);
    let payment = await this.reads.getVisible(principal, input.paymentId);
    // During 3DS the customer may have completed the challenge a moment ago: read the processor's view first,
    // so a payment it has already authorized is voided there rather than forgotten here, and one it has
    // already charged is refused (a void after capture is its own operation).
    if (payment.activeAttempt.connectorTransactionId !== null && AWAITING_CUSTOMER.has(payment.activeAttempt.status)) {
      // A processor that cannot be asked does not block the cancel.
      payment = await this.answers.syncPayment(payment, 'sync').catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'CONNECTOR_ERROR') return payment;
        throw error;
      });
    }
    return this.voided(principal, payment, transitionAttempt(payment.activeAttempt.status, 'void'), input.cancellationReason);
  }

  /** Voids a captured payment at the processor, where it supports that: all the money goes back. */
  async cancelPostCapture(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(cancelPaymentInput, rawInput);
    const payment = await this.reads.getVisible(principal, input.paymentId);
    const move = transitionAttempt(payment.activeAttempt.status, 'void_after_capture');
    const connectorName = payment.activeAttempt.connectorName;
    // Refused before anything is written: a void the processor cannot make would leave the payment waiting on it.
    if (connectorName === null || !isConnectorName(connectorName) || !CONNECTORS[connectorName].voidAfterCapture) {
      throw new AppError('INVALID_STATE', `${connectorName ?? 'This processor'} cannot void a captured payment (${payment.status}); refund it instead.`, {
        status: payment.status,
      });
    }
    await this.refuseVoidAfterRefundOrDispute(payment);
    return this.voided(principal, payment, move, input.cancellationReason);
  }

  /** Commits a cancel's `move` and, when it is a void at the processor, asks the processor for it. */
  private async voided(
    principal: SecretKeyPrincipal,
    payment: Payment,
    move: AttemptTransition,
    cancellationReason: string | null | undefined,
  ): Promise<Payment> {
    const cancelled = await this.deps.store.commit(payment, {
      moves: [move],
      intent: { cancellationReason: cancellationReason ?? null },
      actor: principal.keyId,
    });
    if (move.effect !== 'void_at_processor') return cancelled;
    const connector = await this.answers.connectorOf(cancelled);
    try {
      const answer = await connector.void(cancelled.activeAttempt.connectorTransactionId!, `${cancelled.activeAttempt.id}_void`);
      return this.outcomes.settled(cancelled, await this.answers.applyCallAnswer(cancelled, answer));
    } catch (error) {
      return this.outcomes.settled(cancelled, await this.outcomes.afterConnectorError(cancelled, error, 'void_at_processor'));
    }
  }

  /**
   * A void after capture gives all the money back: not once a refund holds part of it or a dispute is open
   * (the processor would refuse, and the amounts would no longer add up). A refund reserved after this
   * check bumps the payment's version, so the void's own commit then fails with CONFLICT.
   */
  private async refuseVoidAfterRefundOrDispute(payment: Payment): Promise<void> {
    if (payment.amountRefunded > 0) {
      throw new AppError('INVALID_STATE', `A ${payment.status} payment with refunds cannot be voided after capture; refund the rest instead.`, {
        status: payment.status,
      });
    }
    if ((await this.deps.context.db.dispute.count({ where: { paymentId: payment.id } })) > 0) {
      throw new AppError('INVALID_STATE', `A disputed ${payment.status} payment cannot be voided after capture.`, { status: payment.status });
    }
  }
}
