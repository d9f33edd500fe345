// The disputes use cases. A dispute is opened by the processor's callback (never by the API), as one row per
// processor dispute: the unique (account, processor id) key makes a repeated "opened" callback find the row
// it created. The merchant accepts or challenges it at the processor; the network's decision comes back by
// callback. Every move follows modules/disputes/machine.ts under the dispute's version, and writes
// its event in the same transaction.
import { isUniqueViolation } from '../../platform/db/unique-violation.ts';
import { ConnectorError, type Connector, type ProcessorDispute } from '../connectors/port.ts';
import {
  MONEY_DISPUTED_STATUSES,
  DISPUTE_STATUS_EVENTS,
  DISPUTE_TARGETS,
  disputeHold,
  disputePath,
  evidenceProblem,
  type DisputeHold,
  type DisputeRefusal,
} from './machine.ts';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { disputeWireObject } from './wire.ts';
import { isId, newId } from '../../kernel/ids.ts';
import { Prisma, type Dispute } from '../../generated/prisma/client.ts';
import type { ConnectorAccountService } from '../connectors/index.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { CommittedEvent, EventOutbox } from '../events/index.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { applyGuardedMove, type ApplyOutcome } from '../events/index.ts';
import { chargeOf, lockPayment, touchPayment } from '../payments/index.ts';
import { parseInput } from '../../kernel/validation.ts';
import type { LedgerService } from '../ledger/index.ts';
import { challengeDisputeInput, disputeIdInput, listDisputesInput } from './inputs.ts';

/**
 * What a dispute callback did: applied through the table, refused as contradicting its payment, or held until
 * the payment records its capture.
 */
export type DisputeCallbackResult =
  | { paymentId: string; outcome: ApplyOutcome }
  | { paymentId: string; outcome: 'refused'; refusal: DisputeRefusal }
  | { paymentId: string; outcome: 'awaiting_capture' };

export class DisputeService {
  constructor(
    private readonly context: ServiceContext,
    private readonly connectorAccounts: ConnectorAccountService,
    private readonly outbox: EventOutbox,
    private readonly ledger: LedgerService,
  ) {}

  async get(principal: SecretKeyPrincipal, disputeId: string): Promise<Dispute> {
    const dispute = isId('dispute', disputeId) ? await this.context.db.dispute.findUnique({ where: { id: disputeId } }) : null;
    if (dispute === null || dispute.merchantId !== principal.merchantId || dispute.mode !== principal.mode) throw notFound('dispute', disputeId);
    return dispute;
  }

  /** The merchant's disputes in the key's mode, newest first. */
  list(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Dispute[]> {
    const input = parseInput(listDisputesInput, rawInput);
    return this.context.db.dispute.findMany({
      where: {
        merchantId: principal.merchantId,
        mode: principal.mode,
        ...(input.paymentId ? { paymentId: input.paymentId } : {}),
        ...(input.status ? { status: input.status } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: input.first ?? 20,
    });
  }

  /** The disputes of a payment the caller has already been allowed to see, oldest first. */
  ofPayment(paymentId: string): Promise<Dispute[]> {
    return this.context.db.dispute.findMany({ where: { paymentId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  }

  /** Concedes an open dispute at the processor. */
  async accept(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Dispute> {
    const dispute = await this.openDispute(principal, parseInput(disputeIdInput, rawInput).disputeId, 'accepted');
    const answer = await this.atProcessor(dispute, (connector) => connector.acceptDispute(dispute.connectorDisputeId, `${dispute.id}.accept`));
    return (await this.apply(dispute.id, answer, principal.keyId)).dispute;
  }

  /** Challenges an open dispute with the merchant's evidence, before its deadline. */
  async challenge(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Dispute> {
    const input = parseInput(challengeDisputeInput, rawInput);
    const problem = evidenceProblem(input.evidence);
    if (problem !== null) throw invalidInput(problem.field, problem.rule);
    const evidence = input.evidence as Record<string, string>;
    const dispute = await this.openDispute(principal, input.disputeId, 'challenged');
    if (dispute.evidenceDueBy !== null && dispute.evidenceDueBy.getTime() <= Date.now()) {
      throw new AppError('INVALID_STATE', `The evidence was due by ${dispute.evidenceDueBy.toISOString()}; the dispute can no longer be challenged.`, {
        status: dispute.status,
      });
    }
    const answer = await this.atProcessor(dispute, (connector) =>
      connector.submitDisputeEvidence(dispute.connectorDisputeId, evidence, `${dispute.id}.challenge`),
    );
    return (await this.apply(dispute.id, answer, principal.keyId, { evidence })).dispute;
  }

  /**
   * A verified processor callback about a dispute of this connector account: opens it (dispute_opened) the
   * first time, unless it contradicts its payment (refused) or the payment has not recorded the capture it
   * disputes yet (awaiting_capture), then moves it through the table. Null when the account has no such payment.
   */
  async applyCallback(connectorAccountId: string, answer: ProcessorDispute): Promise<DisputeCallbackResult | null> {
    const known = await this.context.db.dispute.findUnique({
      where: { connectorAccountId_connectorDisputeId: { connectorAccountId, connectorDisputeId: answer.disputeId } },
      select: { id: true, paymentId: true },
    });
    if (known !== null) return { paymentId: known.paymentId, outcome: (await this.apply(known.id, answer, 'callback')).outcome };
    const attempt = await this.context.db.paymentAttempt.findFirst({
      where: { connectorAccountId, connectorTransactionId: answer.transactionId },
      include: { payment: true },
    });
    if (attempt === null) return null;
    const opened = await this.open(attempt, answer);
    if (opened === null) return this.applyCallback(connectorAccountId, answer); // a concurrent callback opened it first
    if ('hold' in opened) {
      return opened.hold === 'dispute_awaiting_capture'
        ? { paymentId: attempt.paymentId, outcome: 'awaiting_capture' }
        : { paymentId: attempt.paymentId, outcome: 'refused', refusal: opened.hold };
    }
    // A first callback that already reports a later state (the "opened" one was lost) moves it on from OPENED.
    if (DISPUTE_TARGETS[answer.status] !== 'OPENED') await this.apply(opened.id, answer, 'callback');
    return { paymentId: opened.paymentId, outcome: 'committed' };
  }

  /** The dispute, if it is still open for the merchant's response; INVALID_STATE naming its status otherwise. */
  private async openDispute(principal: SecretKeyPrincipal, disputeId: string, goal: 'accepted' | 'challenged'): Promise<Dispute> {
    const dispute = await this.get(principal, disputeId);
    if (dispute.status !== 'OPENED')
      throw new AppError('INVALID_STATE', `Only an open dispute can be ${goal}; this one is ${dispute.status}.`, { status: dispute.status });
    return dispute;
  }

  private async atProcessor(dispute: Dispute, call: (connector: Connector) => Promise<ProcessorDispute>): Promise<ProcessorDispute> {
    const account = await this.context.db.connectorAccount.findUniqueOrThrow({ where: { id: dispute.connectorAccountId } });
    try {
      return await call(this.connectorAccounts.connectorFor(account));
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      // Nothing is changed here: the processor's callback (or a repeat of the request, idempotent at the processor) settles it.
      throw new AppError('CONNECTOR_ERROR', `The processor did not take the response: ${error.message}.`, { disputeId: dispute.id, status: dispute.status });
    }
  }

  /**
   * Creates the dispute at OPENED with its dispute_opened event; null if a concurrent callback created it, and
   * why not (nothing written) when it does not fit the payment now.
   */
  private async open(
    attempt: Prisma.PaymentAttemptGetPayload<{ include: { payment: true } }>,
    answer: ProcessorDispute,
  ): Promise<Dispute | { hold: DisputeHold } | null> {
    const { payment } = attempt;
    const now = new Date();
    let event: CommittedEvent | null = null;
    try {
      const dispute = await this.context.db.$transaction(async (tx) => {
        // The payment's row first, as refunds take it: a refund waiting for it sees the dispute once it is committed.
        const locked = await lockPayment(tx, payment.id);
        const hold = disputeHold(answer, locked);
        if (hold !== null) return { hold };
        const created = await tx.dispute.create({
          data: {
            id: newId('dispute'),
            ...chargeOf(payment, attempt),
            connectorDisputeId: answer.disputeId,
            status: 'OPENED',
            amount: answer.amount,
            currency: answer.currency,
            reason: answer.reason,
            evidenceDueBy: answer.evidenceDueBy,
            createdAt: now,
            updatedAt: now,
          },
        });
        // The payment changes with it: a void after capture that read the payment before (and checked it had
        // no dispute) must not go on, or the money would go back twice (the void and the chargeback).
        await touchPayment(tx, payment.id);
        // The processor withdraws the disputed money when the dispute opens (docs/ledger.md), from each share.
        await this.ledger.takeBack(
          tx,
          { payment, captured: locked.amountReceived, connectorAccountId: created.connectorAccountId },
          { type: 'dispute', id: created.id, amount: created.amount },
        );
        event = await this.outbox.recordChange(tx, created, DISPUTE_STATUS_EVENTS.OPENED, disputeWireObject(created));
        return created;
      });
      if (event !== null) this.outbox.afterCommit(event);
      return dispute;
    } catch (error) {
      if (isUniqueViolation(error, 'disputes_connector_account_id_connector_dispute_id_key')) return null;
      throw error;
    }
  }

  /**
   * Moves the dispute to what the processor reports, along the table's rows (through CHALLENGED when a
   * decision comes before the report of its challenge, each step's event written); anything else changes nothing.
   */
  private async apply(
    disputeId: string,
    answer: ProcessorDispute,
    actor: string,
    extra: { evidence?: Record<string, string> } = {},
  ): Promise<{ dispute: Dispute; outcome: ApplyOutcome }> {
    const target = DISPUTE_TARGETS[answer.status];
    const { row, outcome } = await applyGuardedMove<Dispute>(this.context.db, this.outbox, {
      read: () => this.context.db.dispute.findUniqueOrThrow({ where: { id: disputeId } }),
      plan: (dispute) => {
        const path = disputePath(dispute.status, target);
        if (path !== null && path.length > 0)
          return { status: target, ...(extra.evidence ? { evidence: extra.evidence } : {}), version: { increment: 1 }, updatedAt: new Date() };
        if (path === null)
          this.context.logger.info({ disputeId, status: dispute.status, answer: answer.status, actor }, 'ignored a dispute answer no transition leads to');
        return null;
      },
      write: async (tx, dispute, data) => (await tx.dispute.updateManyAndReturn({ where: { id: dispute.id, version: dispute.version }, data }))[0],
      moved: async (tx, before, after) => {
        if (MONEY_DISPUTED_STATUSES.has(before.status) && !MONEY_DISPUTED_STATUSES.has(after.status)) await this.giveBack(tx, after);
        const events = [];
        for (const status of disputePath(before.status, after.status) ?? []) {
          const at = { ...after, status };
          events.push(await this.outbox.recordChange(tx, at, DISPUTE_STATUS_EVENTS[status], disputeWireObject(at)));
        }
        return events;
      },
    });
    if (outcome === 'deferred') this.context.logger.warn({ disputeId, answer: answer.status }, 'dispute answer deferred after repeated concurrent changes');
    return { dispute: row, outcome };
  }

  /** A dispute won or withdrawn gives the withdrawn money back to the shares it was taken from. */
  private async giveBack(tx: Prisma.TransactionClient, dispute: Dispute): Promise<void> {
    const locked = await lockPayment(tx, dispute.paymentId);
    const payment = await tx.paymentIntent.findUniqueOrThrow({ where: { id: dispute.paymentId } });
    await this.ledger.takeBack(
      tx,
      { payment, captured: locked.amountReceived, connectorAccountId: dispute.connectorAccountId },
      { type: 'dispute', id: dispute.id, amount: -dispute.amount },
    );
  }
}
