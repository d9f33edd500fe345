// The refunds use cases. A refund's amount is reserved on its payment (amountRefunded) in the transaction that
// creates it, under the payment's row lock: concurrent refunds (and a dispute being opened) queue on that row,
// and each checks what the one before it committed, so none overdraws or refunds a disputed payment (a CHECK
// constraint holds the amount's line too). The processor is called after commit, as for payments, and its
// answer moves the refund along modules/refunds/machine.ts in a second transaction guarded by the
// refund's version; a refund that ends FAILED gives its reservation back in that same transaction.
import { ConnectorError, type Connector, type ProcessorRefund } from '../connectors/port.ts';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { refundWireObject } from './wire.ts';
import { isId, newId } from '../../kernel/ids.ts';
import { isRefundMoveAllowed, OPEN_REFUND_STATUSES, REFUNDABLE_PAYMENT_STATUSES, REFUND_STATUS_EVENTS, REFUND_TARGETS, refundAmount } from './machine.ts';
import { Prisma, type Refund } from '../../generated/prisma/client.ts';
import { MONEY_DISPUTED_STATUSES } from '../disputes/machine.ts';
import type { ConnectorAccountService } from '../connectors/index.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { EventOutbox } from '../events/index.ts';
import { applyGuardedMove, type ApplyOutcome } from '../events/index.ts';
import type { PaymentService } from '../payments/index.ts';
import type { LedgerService } from '../ledger/index.ts';
import { chargeOf, lockPayment, refundSplitOf, releaseRefund, reserveRefund } from '../payments/index.ts';
import type { PaymentSyncScheduler, ResourceSyncJob } from '../processor-sync/index.ts';
import { askProcessor, runSyncStep, watchOpen } from '../processor-sync/index.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createRefundInput } from './inputs.ts';

export class RefundService {
  constructor(
    private readonly context: ServiceContext,
    private readonly payments: PaymentService,
    private readonly connectorAccounts: ConnectorAccountService,
    private readonly outbox: EventOutbox,
    private readonly syncScheduler: PaymentSyncScheduler,
    private readonly ledger: LedgerService,
  ) {}

  /**
   * Refunds `amount` (or all that is left) of a captured payment: reserves it, sends it to the payment's
   * processor and returns the refund as the processor left it (PENDING while it decides).
   */
  async create(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Refund> {
    const input = parseInput(createRefundInput, rawInput);
    const payment = await this.payments.getVisible(principal, input.paymentId);
    if (!REFUNDABLE_PAYMENT_STATUSES.has(payment.status)) {
      throw new AppError('INVALID_STATE', `Only a payment that captured money can be refunded; this one is ${payment.status}.`, { status: payment.status });
    }
    const attempt = payment.activeAttempt;
    const now = new Date();
    const refundId = newId('refund');
    // Read before the payment's lock: a capture's settlement date is written with it and never changes.
    const settlesAt = await this.ledger.settlementOf(payment.id);
    const { refund, split } = await this.context.db.$transaction(async (tx) => {
      const { amount, captured } = await this.reserve(tx, payment.id, input.amount ?? undefined);
      // The refund's shares leave the balances of those the payment paid now, or the refund is refused (docs/ledger.md).
      const charge = { payment, captured, connectorAccountId: attempt.connectorAccountId! };
      const credits = await this.ledger.takeBack(tx, charge, { type: 'refund', id: refundId, amount, settlesAt });
      // A payment paid on at its processor is refunded there by the same shares (docs/ledger.md, "Processors").
      const created = await tx.refund.create({
        data: {
          id: refundId,
          ...chargeOf(payment, attempt),
          status: 'PENDING',
          amount,
          currency: payment.currency,
          reason: input.reason ?? null,
          createdAt: now,
          updatedAt: now,
        },
      });
      return { refund: created, split: refundSplitOf(payment, attempt, captured, credits, amount) };
    });
    let answer: ProcessorRefund;
    try {
      const connector = await this.connectorOf(refund);
      answer = await connector.refund({
        transactionId: attempt.connectorTransactionId!,
        amount: refund.amount,
        currency: refund.currency,
        reason: refund.reason,
        reference: refund.id,
        ...(split === undefined ? {} : { split }),
      });
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      this.context.logger.warn({ refundId, kind: error.kind, err: error.message }, 'refund call to the processor failed');
      // The processor may have acted (timeout, 5xx): the refund stays PENDING and the schedule syncs it.
      if (error.outcomeUnknown) return this.watched(refund);
      const failure = {
        refundId: refund.id,
        status: 'failed' as const,
        amount: refund.amount,
        error: { code: error.processorCode ?? 'connector_error', message: error.message },
      };
      return (await this.apply(refund.id, failure, 'processor')).refund;
    }
    return this.watched((await this.apply(refund.id, answer, 'processor')).refund);
  }

  async get(principal: SecretKeyPrincipal, refundId: string): Promise<Refund> {
    const refund = isId('refund', refundId) ? await this.context.db.refund.findUnique({ where: { id: refundId } }) : null;
    if (refund === null || refund.merchantId !== principal.merchantId || refund.mode !== principal.mode) throw notFound('refund', refundId);
    return refund;
  }

  /** A payment's refunds, oldest first. */
  async listForPayment(principal: SecretKeyPrincipal, paymentId: string): Promise<Refund[]> {
    return this.ofPayment((await this.payments.getVisible(principal, paymentId)).id);
  }

  /** The refunds of a payment the caller has already been allowed to see. */
  ofPayment(paymentId: string): Promise<Refund[]> {
    return this.context.db.refund.findMany({ where: { paymentId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** Asks the processor for the refund's current state (syncRefund). */
  async sync(principal: SecretKeyPrincipal, refundId: string): Promise<Refund> {
    return this.syncRefund(await this.get(principal, refundId), principal.keyId);
  }

  /**
   * A verified processor callback about a refund of this connector account: applied through the same table
   * as every answer. Null when the account has no such refund.
   */
  async applyCallback(
    connectorAccountId: string,
    answer: ProcessorRefund,
    reference: string | null,
  ): Promise<{ paymentId: string; outcome: ApplyOutcome } | null> {
    const found = await this.context.db.refund.findFirst({
      where: {
        connectorAccountId,
        OR: [{ connectorRefundId: answer.refundId }, ...(reference !== null && isId('refund', reference) ? [{ id: reference }] : [])],
      },
      select: { id: true, paymentId: true },
    });
    if (found === null) return null;
    const { outcome } = await this.apply(found.id, answer, 'callback');
    return { paymentId: found.paymentId, outcome };
  }

  /** One step of a refund's sync schedule (run by the worker). */
  runScheduledSync(job: ResourceSyncJob): Promise<void> {
    return runSyncStep(
      job,
      {
        load: (id) => this.context.db.refund.findUnique({ where: { id } }),
        isOpen: (refund) => OPEN_REFUND_STATUSES.has(refund.status),
        sync: (refund) => this.syncRefund(refund, 'scheduled_sync'),
        scheduleStep: (step) => this.syncScheduler.scheduleResource({ ...job, step }),
        flagExhausted: async (id) => void (await this.context.db.refund.update({ where: { id }, data: { syncExhaustedAt: new Date() } })),
      },
      this.context.logger,
    );
  }

  private async syncRefund(refund: Refund, actor: string): Promise<Refund> {
    if (!OPEN_REFUND_STATUSES.has(refund.status)) return refund;
    const connector = await this.connectorOf(refund);
    const answer = await askProcessor(
      refund.connectorRefundId,
      (id) => connector.syncRefund(id),
      async () => {
        const transactionId = await this.refundedTransactionId(refund);
        // Without the payment's id no lookup can conclude anything (Stripe's would list every refund of the account).
        return transactionId === null ? null : connector.findRefundByReference(refund.id, transactionId);
      },
    );
    // No refund at the processor: the call may still be in flight, so nothing is concluded from absence.
    return answer === null ? refund : (await this.apply(refund.id, answer, actor)).refund;
  }

  /**
   * Moves the refund to what the processor reports, along the table's rows only: a late, duplicate or
   * out-of-order answer changes nothing (but a refund whose call timed out still learns the processor's
   * id). A move to FAILED gives the reservation back, in the same transaction as the move and its event.
   */
  private async apply(refundId: string, answer: ProcessorRefund, actor: string): Promise<{ refund: Refund; outcome: ApplyOutcome }> {
    const { row, outcome } = await applyGuardedMove<Refund>(this.context.db, this.outbox, {
      read: () => this.context.db.refund.findUniqueOrThrow({ where: { id: refundId } }),
      plan: (refund) => {
        const target = REFUND_TARGETS[answer.status];
        const moves = isRefundMoveAllowed(refund.status, target);
        if (!moves && target !== refund.status)
          this.context.logger.info({ refundId, status: refund.status, answer: answer.status, actor }, 'ignored a refund answer no transition leads to');
        if (!moves && refund.connectorRefundId !== null) return null;
        const move = {
          status: target,
          errorCode: answer.error?.code ?? null,
          errorMessage: answer.error?.message ?? null,
          version: { increment: 1 },
          updatedAt: new Date(),
        };
        return { connectorRefundId: answer.refundId, ...(moves ? move : {}) };
      },
      write: async (tx, refund, data) => (await tx.refund.updateManyAndReturn({ where: { id: refund.id, version: refund.version }, data }))[0],
      moved: async (tx, before, after) => {
        if (after.status === 'FAILED') await this.giveBack(tx, after);
        const object = refundWireObject(after);
        const events = [await this.outbox.recordChange(tx, after, REFUND_STATUS_EVENTS[after.status], object)];
        if (after.status === 'SUCCEEDED' && (await this.returnsSurcharge(tx, after)))
          events.push(await this.outbox.recordChange(tx, after, 'surcharge_refund_succeeded', object));
        return events;
      },
    });
    if (outcome === 'deferred')
      this.context.logger.warn({ refundId, answer: answer.status }, 'refund answer deferred to sync after repeated concurrent changes');
    return { refund: row, outcome };
  }

  /**
   * Reserves `requested` on the payment (all that is left when it is omitted) and returns the amount reserved,
   * or refuses. The payment's row is locked first and only then checked: under READ COMMITTED each statement
   * after the lock sees all that committed before it (a dispute opened meanwhile, another refund's reservation,
   * so "all that is left" is what is left now), while a condition inside the locking UPDATE itself would read the
   * disputes as they were when it started waiting for the lock. The version moves, so a void after capture
   * that read the payment before cannot go on as if unrefunded.
   */
  private async reserve(tx: Prisma.TransactionClient, paymentId: string, requested: number | undefined): Promise<{ amount: number; captured: number }> {
    const current = await lockPayment(tx, paymentId);
    await this.refuseDisputed(tx, paymentId);
    if (!REFUNDABLE_PAYMENT_STATUSES.has(current.status))
      throw new AppError('INVALID_STATE', `Only a payment that captured money can be refunded; this one is ${current.status}.`, { status: current.status });
    const decided = refundAmount(requested, current.amountReceived - current.amountRefunded);
    if ('problem' in decided) throw invalidInput('amount', decided.problem);
    await reserveRefund(tx, paymentId, decided.amount);
    return { amount: decided.amount, captured: current.amountReceived };
  }

  /** A failed refund's reservation back to its payment, and its shares back to the balances they left. */
  private async giveBack(tx: Prisma.TransactionClient, refund: Refund): Promise<void> {
    await releaseRefund(tx, refund.paymentId, refund.amount);
    const payment = await tx.paymentIntent.findUniqueOrThrow({ where: { id: refund.paymentId } });
    await this.ledger.takeBack(
      tx,
      { payment, captured: payment.amountReceived, connectorAccountId: refund.connectorAccountId },
      { type: 'refund', id: refund.id, amount: -refund.amount, settlesAt: await this.ledger.settlementOf(refund.paymentId, tx) },
    );
  }

  /**
   * A disputed payment is not refunded: the chargeback already takes (or may take) the money back, and a
   * refund would return it twice. Only a dispute the merchant won, or one withdrawn, leaves it refundable.
   */
  private async refuseDisputed(tx: Prisma.TransactionClient, paymentId: string): Promise<void> {
    const dispute = await tx.dispute.findFirst({ where: { paymentId, status: { in: [...MONEY_DISPUTED_STATUSES] } }, select: { id: true, status: true } });
    if (dispute !== null) {
      throw new AppError('INVALID_STATE', `Payment ${paymentId} has dispute ${dispute.id} (${dispute.status}); a refund would return the money twice.`, {
        status: dispute.status,
      });
    }
  }

  /**
   * Whether a refund that just succeeded returns (part of) its payment's surcharge: refunds return the
   * payment's amount first and its surcharge last, so it does once the succeeded refunds pass the amount.
   */
  private async returnsSurcharge(tx: Prisma.TransactionClient, refund: Refund): Promise<boolean> {
    const payment = await tx.paymentIntent.findUniqueOrThrow({ where: { id: refund.paymentId }, select: { amount: true, surchargeAmount: true } });
    if (payment.surchargeAmount === 0) return false;
    // Refunds of one payment succeeding at once would each see only itself: they take turns on the payment's row.
    await tx.$queryRaw`SELECT 1 FROM payment_intents WHERE id = ${refund.paymentId} FOR UPDATE`;
    const succeeded = await tx.refund.aggregate({ where: { paymentId: refund.paymentId, status: 'SUCCEEDED' }, _sum: { amount: true } });
    return (succeeded._sum.amount ?? 0) > payment.amount;
  }

  /** Starts the sync schedule of a refund left open by the call that just returned. */
  private async watched(refund: Refund): Promise<Refund> {
    if (OPEN_REFUND_STATUSES.has(refund.status)) await watchOpen({ kind: 'refund', id: refund.id }, this.syncScheduler, this.context.logger);
    return refund;
  }

  /** The processor's id of the payment the refund is of; null when its attempt never learnt it. */
  private async refundedTransactionId(refund: Refund): Promise<string | null> {
    const attempt = await this.context.db.paymentAttempt.findUniqueOrThrow({ where: { id: refund.attemptId }, select: { connectorTransactionId: true } });
    return attempt.connectorTransactionId;
  }

  private async connectorOf(refund: Refund): Promise<Connector> {
    const account = await this.context.db.connectorAccount.findUniqueOrThrow({ where: { id: refund.connectorAccountId } });
    return this.connectorAccounts.connectorFor(account);
  }
}
