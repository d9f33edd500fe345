// Applying what processors say about payments, whoever asked: the answer to a call, a callback, a sync (by
// API, redirect return or schedule). Each moves the payment to what the processor reports, along the
// table's rows only: an answer that no row leads to (late, duplicate or out of order) changes nothing;
// neither does `pending` (still working). Re-reads and re-plans when a concurrent request moved the payment first.
// A failure of an authorization its own request may still be waiting for is that request's to apply: it may
// retry the payment on the next connector, which a FAILED payment would forbid (docs/payments.md).
import { ConnectorError, type Connector, type PaymentError, type ProcessorPayment } from '../../connectors/port.ts';
import { returnLocation } from '../../../kernel/return-url.ts';
import { AppError, notFound } from '../../../kernel/errors.ts';
import { isId } from '../../../kernel/ids.ts';
import type { Principal } from '../../../kernel/principal.ts';
import type { ProcessorErrorBody } from '../../../kernel/processor-error-body.ts';
import { Prisma } from '../../../generated/prisma/client.ts';
import type { CommittedEvent } from '../../events/index.ts';
import { ATTEMPT_TARGETS, planProcessorUpdate, processorAmountsProblem, transitionAttempt } from '../machine/attempt.ts';
import { intentStatusOf, SYNCABLE_INTENT_STATUSES } from '../machine/statuses.ts';
import type { Commit, Payment } from '../store.ts';
import { askProcessor } from '../../processor-sync/index.ts';
import { hasTakenBack } from '../../ledger/index.ts';
import type { PaymentDependencies } from './dependencies.ts';
import type { PaymentReads } from './reads.ts';

/** How many times an answer is re-applied when a concurrent request moved the payment first. */
export const MAX_COMMIT_RETRIES = 3;

/** Processor answers saying the customer's money is taken. */
const TAKES_MONEY: ReadonlySet<ProcessorPayment['status']> = new Set(['captured', 'partially_captured']);

/**
 * A payment's error columns for a processor's failure (all null when it reports none): our code, the processor's own
 * beside it (docs/declines.md), and the message.
 */
export const errorFieldsOf = (error: Pick<PaymentError, 'processorCode' | 'message'> & { code: string }) => ({
  errorCode: error.code,
  processorErrorCode: error.processorCode,
  errorMessage: error.message,
});

/** An attempt's error columns: the payment's, and the processor's error body, scrubbed by its connector (docs/payments.md). */
export const attemptErrorFieldsOf = (error: Pick<PaymentError, 'processorCode' | 'message' | 'processorBody'> & { code: string }) => ({
  ...errorFieldsOf(error),
  processorError: processorErrorColumn(error.processorBody),
});

/** A processor error body as its JSONB column sets it: SQL NULL when there is none. */
export const processorErrorColumn = (body: ProcessorErrorBody | null) => body ?? Prisma.DbNull;

/** A payment's error columns when it has no error (an answer without one, a new attempt's start). */
export const NO_ERROR = { errorCode: null, processorErrorCode: null, errorMessage: null };
const NO_ATTEMPT_ERROR = { ...NO_ERROR, processorError: Prisma.DbNull };

/** Intent states in which the customer's money is authorized or taken. */
export const PAID: ReadonlySet<Payment['status']> = new Set(['REQUIRES_CAPTURE', 'PARTIALLY_AUTHORIZED', 'SUCCEEDED', 'PARTIALLY_CAPTURED']);

/** What an answer that changes nothing is worth logging. */
type Logged = { level: 'info' | 'error'; message: string };

export class ProcessorAnswers {
  constructor(
    private readonly deps: PaymentDependencies,
    private readonly reads: PaymentReads,
  ) {}

  /** Asks the processor for the truth of a payment that is waiting on it; terminal payments are returned as they are. */
  async sync(principal: Principal, paymentId: string): Promise<Payment> {
    return this.syncPayment(await this.reads.getVisible(principal, paymentId), 'sync');
  }

  async syncPayment(payment: Payment, actor: string): Promise<Payment> {
    if (!SYNCABLE_INTENT_STATUSES.has(payment.status) || payment.activeAttempt.connectorAccountId === null) return payment;
    const connector = await this.connectorOf(payment);
    const { connectorTransactionId, id: attemptId } = payment.activeAttempt;
    // A timed-out authorization left no transaction id: find it by our reference.
    const answer = await askProcessor(
      connectorTransactionId,
      (id) => connector.sync(id),
      () => connector.findByReference(attemptId),
    );
    if (answer !== null) return this.applyAnswer(payment, answer, actor);
    // The processor has no payment for the attempt. Once its authorization request has certainly ended,
    // that is final: the request never reached the processor, and the attempt failed without a charge.
    if (payment.activeAttempt.status !== 'PENDING' || !this.isStalled(payment)) return payment;
    const error = { errorCode: 'not_received_by_processor', errorMessage: 'The authorization request never reached the processor.' };
    return this.deps.store.commit(payment, {
      moves: [transitionAttempt('PENDING', 'processor_call', { result: 'failure' })],
      attempt: error,
      intent: error,
      actor,
    });
  }

  /**
   * A processor's callback about the payment whose attempt has `answer.transactionId` at the connector
   * account: applied through the same table as every other answer, so a duplicate, late or out-of-order
   * one changes nothing. Null when the account has no such attempt. Only the active attempt's news moves
   * the payment (an earlier attempt's outcome is history).
   */
  async applyCallback(
    connectorAccountId: string,
    answer: ProcessorPayment,
    reference: string | null,
  ): Promise<{ paymentId: string; outcome: 'committed' | 'unchanged' | 'deferred' } | null> {
    // By the processor's id, or (an attempt whose authorization timed out has none yet) by our reference.
    const attempt = await this.deps.context.db.paymentAttempt.findFirst({
      where: {
        connectorAccountId,
        OR: [{ connectorTransactionId: answer.transactionId }, ...(reference !== null && isId('attempt', reference) ? [{ id: reference }] : [])],
      },
      select: { id: true, paymentId: true },
    });
    if (attempt === null) return null;
    // A callback is a snapshot from when it was sent (a processor's retry may be minutes old): it moves the
    // payment along the table's ordinary rows only, never the recovery rows a stalled sync may take.
    const { payment, outcome } = await this.applyAnswerTo(attempt.paymentId, answer, 'callback', { attemptId: attempt.id, recoveryRows: false });
    return { paymentId: payment.id, outcome };
  }

  /**
   * Where the processor returns the customer after 3DS or a redirect: sync, then tell the caller where to
   * send the browser. No key: the route is public, so it needs the token of the return URL the processor was
   * given for the active attempt; anything else is NOT_FOUND, before any sync, as for an unknown payment.
   */
  async returnFromRedirect(
    paymentId: string,
    connectorName: string,
    token: string,
    redirectResult: string | null,
  ): Promise<{ payment: Payment; location: string | null }> {
    const found = await this.deps.store.find(paymentId);
    if (found === null || found.activeAttempt.connectorName !== connectorName || !this.deps.keys.isRedirectToken(token, found.activeAttempt.id)) {
      throw notFound('payment', paymentId);
    }
    const payment = redirectResult === null ? await this.syncPayment(found, 'redirect') : await this.completeRedirect(found, redirectResult);
    if (!payment.returnUrl) return { payment, location: null };
    return { payment, location: returnLocation(payment.returnUrl, payment.id, payment.status) };
  }

  /** Finishes the payment with the processor's redirect result, where its connector does so; syncs it otherwise. */
  private async completeRedirect(payment: Payment, redirectResult: string): Promise<Payment> {
    if (!SYNCABLE_INTENT_STATUSES.has(payment.status) || payment.activeAttempt.connectorAccountId === null) return payment;
    const connector = await this.connectorOf(payment);
    if (connector.completeRedirect === undefined) return this.syncPayment(payment, 'redirect');
    const request = {
      reference: payment.activeAttempt.id,
      redirectResult,
      captureMethod: payment.captureMethod,
      amount: payment.amount + payment.surchargeAmount,
    };
    let answer: ProcessorPayment;
    try {
      answer = await connector.completeRedirect(request);
    } catch (error) {
      if (error instanceof ConnectorError) throw new AppError('CONNECTOR_ERROR', `The processor could not complete the payment: ${error.message}.`);
      throw error;
    }
    return this.applyAnswer(payment, answer, 'redirect');
  }

  /**
   * The processor's answer to the call the caller made about `sent`'s active attempt (confirm, capture, void):
   * applied to that attempt only, failure included. If another attempt became active meanwhile, it changes nothing.
   */
  async applyCallAnswer(sent: Payment, answer: ProcessorPayment): Promise<Payment> {
    return (await this.applyAnswerTo(sent.id, answer, 'processor', { attemptId: sent.activeAttempt.id, held: sent, ownCall: true })).payment;
  }

  /**
   * A processor's answer about `asked`'s active attempt that `actor` asked for (a sync, a redirect): applied to
   * that attempt only. If another attempt became active meanwhile (a retry, a manual retry after a callback),
   * the answer changes nothing.
   */
  private async applyAnswer(asked: Payment, answer: ProcessorPayment, actor: string): Promise<Payment> {
    return (await this.applyAnswerTo(asked.id, answer, actor, { attemptId: asked.activeAttempt.id, held: asked })).payment;
  }

  /**
   * applyAnswer, saying whether it committed a change, changed nothing, or deferred it (to a sync after
   * repeated concurrent changes, or to the authorization request still waiting for the answer).
   * `attemptId`: only while that attempt is the active one (on every re-read).
   * `recoveryRows: false`: never the stalled-request recovery rows (for answers that may be old).
   * `ownCall`: the answer to the caller's own processor call, which no other request waits for.
   * `held`: the state the caller committed just before asking the processor, tried first without reading
   * it again (two statements fewer on every confirm, capture and void): the commit's version guard refuses
   * it if anything changed meanwhile, and then the payment is read. Only a fresh read may conclude that the
   * answer changes nothing, and a conflict on the held state does not count against the retries.
   */
  private async applyAnswerTo(
    paymentId: string,
    answer: ProcessorPayment,
    actor: string,
    options: { attemptId?: string; recoveryRows?: boolean; held?: Payment; ownCall?: true } = {},
  ): Promise<{ payment: Payment; outcome: 'committed' | 'unchanged' | 'deferred' }> {
    let held = options.held;
    for (let conflicts = 0; ;) {
      const payment = held ?? (await this.deps.store.get(paymentId));
      const onHeld = held !== undefined;
      held = undefined;
      // A capture reported failed is refused after money was taken back of it (read on every try: a dispute
      // opening meanwhile bumps the version, so the commit conflicts and this reads again).
      const takenBack = answer.status === 'capture_failed' && (payment.amountRefunded > 0 || (await hasTakenBack(this.deps.context.db, paymentId)));
      const plan = this.planAnswer(payment, answer, { ...options, takenBack });
      if ('unchanged' in plan || 'leftToItsRequest' in plan) {
        if (onHeld) continue;
        const logged = 'unchanged' in plan ? plan.unchanged : plan.leftToItsRequest;
        if (logged) this.deps.context.logger[logged.level]({ paymentId, status: payment.activeAttempt.status, answer: answer.status, actor }, logged.message);
        return { payment, outcome: 'unchanged' in plan ? 'unchanged' : 'deferred' };
      }
      try {
        const moved = await this.deps.store.commit(payment, { ...plan.commit, actor, alsoInTransaction: (after) => this.cardToKeep(payment, after, answer) });
        return { payment: moved, outcome: 'committed' };
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
        if (!onHeld && ++conflicts >= MAX_COMMIT_RETRIES) {
          // The processor acted; its answer is not lost but deferred: a sync reads it again.
          this.deps.context.logger.warn({ paymentId, answer: answer.status }, 'processor answer deferred to sync after repeated concurrent changes');
          return { payment: await this.deps.store.get(paymentId), outcome: 'deferred' };
        }
      }
    }
  }

  /**
   * What the processor's answer does to `payment` as it stands: the commit it makes, or nothing (with what
   * to log, if it is worth a line). Pure: the caller reads and commits.
   */
  private planAnswer(
    payment: Payment,
    answer: ProcessorPayment,
    options: { attemptId?: string; recoveryRows?: boolean; ownCall?: true; takenBack: boolean },
  ): { commit: Omit<Commit, 'actor'> } | { unchanged: Logged | null } | { leftToItsRequest: Logged } {
    if (options.attemptId !== undefined && payment.activeAttempt.id !== options.attemptId) return { unchanged: null };
    const amountsProblem =
      answer.status === 'pending'
        ? null
        : processorAmountsProblem(answer.status, answer.amountCaptured, answer.amountCapturable, payment.amount + payment.surchargeAmount);
    if (amountsProblem !== null)
      return { unchanged: { level: 'error', message: `ignored a processor answer whose amounts do not fit the payment: ${amountsProblem}` } };
    const path =
      answer.status === 'pending'
        ? []
        : planProcessorUpdate(payment.activeAttempt.status, ATTEMPT_TARGETS[answer.status], {
            captureMethod: payment.captureMethod,
            stalled: options.recoveryRows !== false && this.isStalled(payment),
            captureReversed: answer.status === 'capture_failed',
          });
    if (path === null && payment.activeAttempt.status === 'VOIDED' && TAKES_MONEY.has(answer.status)) {
      // Cancelled here while the customer was at the processor (the seed: not voided there), who then finished
      // paying: the processor took money for a cancelled payment (a void at the processor never ends captured).
      return { unchanged: { level: 'error', message: 'the processor reports money taken for a payment cancelled here: refund it at the processor' } };
    }
    if (path !== null && answer.status === 'capture_failed' && options.takenBack) {
      // A capture reversed after refunds or a dispute took money back of it: what was given back of money never
      // taken is for an operator to settle with the processor; the payment is left as it is rather than half undone.
      return {
        unchanged: { level: 'error', message: 'the processor reports a capture failed after refunds or a dispute: settle them at the processor' },
      };
    }
    if (path === null) return { unchanged: { level: 'info', message: 'ignored a processor answer no transition leads to' } };
    if (!options.ownCall && path.length > 0 && intentStatusOf(path.at(-1)!.to) === 'FAILED' && this.awaitsItsCall(payment)) {
      // Its request, which may retry it on the next connector, applies it when the answer reaches it (or a sync
      // does once that request has certainly ended): failed here first, the payment could not be retried.
      return { leftToItsRequest: { level: 'info', message: 'left a failed authorization to its request, still waiting for the answer' } };
    }
    if (path.length === 0) {
      // Still learn the processor's id of a pending attempt (a timed-out call), without moving it.
      return payment.activeAttempt.connectorTransactionId === null
        ? { commit: { moves: [], attempt: { connectorTransactionId: answer.transactionId } } }
        : { unchanged: null };
    }
    return {
      commit: {
        moves: path,
        attempt: {
          connectorTransactionId: answer.transactionId,
          amountCapturable: answer.amountCapturable,
          amountCaptured: answer.amountCaptured,
          redirectUrl: answer.nextAction?.url ?? null,
          nextAction: (answer.nextAction ?? Prisma.DbNull) as Prisma.InputJsonValue,
          ...(answer.error ? attemptErrorFieldsOf(answer.error) : NO_ATTEMPT_ERROR),
        },
        ...(answer.fundsAvailableAt ? { fundsAvailableAt: answer.fundsAvailableAt } : {}),
        intent: {
          amountCapturable: answer.amountCapturable,
          amountReceived: answer.amountCaptured,
          ...(answer.error ? errorFieldsOf(answer.error) : NO_ERROR),
        },
      },
    };
  }

  /**
   * A processor gives a reusable card token only when asked (confirm with savePaymentMethod, or a setup for
   * off-session use); it is kept on the customer once the attempt is paid (authorized or charged), whether
   * that took one answer or a 3DS challenge and a sync later. A card that was declined or failed
   * authentication is never saved. A setup payment (setupFutureUsage OFF_SESSION) then gets its mandate,
   * on the card just saved or the saved card it was paid with. All in the transaction that records the
   * payment paid, so a crash cannot leave a paid setup without its mandate. Null when the move `before` →
   * `after` keeps nothing (most answers: the commit is then one statement, with no transaction around it).
   */
  private cardToKeep(before: Payment, after: Payment, answer: ProcessorPayment): ((tx: Prisma.TransactionClient) => Promise<CommittedEvent[]>) | null {
    const customerId = after.customerId;
    if (customerId === null || PAID.has(before.status) || !PAID.has(after.status)) return null;
    const { savedPaymentMethodId } = after.activeAttempt;
    if (savedPaymentMethodId === null && !answer.paymentMethodToken) return null;
    return async (tx) => {
      const customer = { merchantId: after.merchantId, mode: after.mode, customerId };
      const saved =
        savedPaymentMethodId !== null
          ? await tx.savedPaymentMethod.findUniqueOrThrow({ where: { id: savedPaymentMethodId } })
          : await this.deps.customers.saveCard(customer, after.activeAttempt, answer.paymentMethodToken!, tx);
      // A mandate is a setup's, never a merchant-initiated payment's (which charges one already), on the token
      // this payment was paid with.
      if (after.setupFutureUsage !== 'OFF_SESSION' || after.mandateId !== null) return [];
      const token = answer.paymentMethodToken ?? this.deps.customers.processorToken(saved);
      return this.deps.mandates.recordForPayment(tx, { ...after, customerId }, saved, token);
    };
  }

  /**
   * Whether the request that sent the attempt's authorization may still be waiting for the processor's answer:
   * the attempt is PENDING, no answer has named the processor's payment yet, and that request has not certainly ended.
   */
  private awaitsItsCall(payment: Payment): boolean {
    return payment.activeAttempt.status === 'PENDING' && payment.activeAttempt.connectorTransactionId === null && !this.isStalled(payment);
  }

  /** Whether the request that moved the attempt last has certainly ended (see AttemptConditions.stalled). */
  private isStalled(payment: Payment, now = Date.now()): boolean {
    return now - payment.activeAttempt.updatedAt.getTime() > 2 * this.deps.context.config.CONNECTOR_TIMEOUT_MS;
  }

  async connectorOf(payment: Payment): Promise<Connector> {
    const account = await this.deps.context.db.connectorAccount.findUniqueOrThrow({ where: { id: payment.activeAttempt.connectorAccountId! } });
    return this.deps.connectorAccounts.connectorFor(account);
  }
}
