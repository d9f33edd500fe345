// The payouts use cases: money sent from the merchant to a card or bank account. A payout the merchant's own
// rules forbid (its profile's limit, a country no payout connector serves) is recorded NOT_PERMITTED with
// its event and never reaches a processor. Otherwise it is committed CREATED, sent after commit with our
// payout id as idempotency key and reference, and moved along modules/payouts/machine.ts by the
// answer, callbacks and syncs; a lost answer leaves it open for the sync schedule.
import { ConnectorError, type Connector, type ProcessorPayout } from '../connectors/port.ts';
import { CONNECTORS, isConnectorName } from '../connectors/index.ts';
import { ibanLast4 } from './bank-accounts.ts';
import { last4 } from '../../kernel/cards.ts';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { payoutWireObject } from './wire.ts';
import { isId, newId } from '../../kernel/ids.ts';
import { isPayoutMoveAllowed, OPEN_PAYOUT_STATUSES, PAYOUT_HOLDING_STATUSES, PAYOUT_STATUS_EVENTS, PAYOUT_TARGETS, payoutRefusal } from './machine.ts';
import type { ConnectorAccount, Payout } from '../../generated/prisma/client.ts';
import { profileFor } from '../merchants/index.ts';
import { profileSettings } from '../merchants/index.ts';
import type { ConnectorAccountService } from '../connectors/index.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { CommittedEvent, EventOutbox } from '../events/index.ts';
import { applyGuardedMove, type ApplyOutcome } from '../events/index.ts';
import type { PaymentSyncScheduler, ResourceSyncJob } from '../processor-sync/index.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { askProcessor, runSyncStep, watchOpen } from '../processor-sync/index.ts';
import { parseInput } from '../../kernel/validation.ts';
import type { LedgerService } from '../ledger/index.ts';
import { createPayoutInput, listPayoutsInput, payoutIdInput } from './inputs.ts';

export class PayoutService {
  constructor(
    private readonly context: ServiceContext,
    private readonly connectorAccounts: ConnectorAccountService,
    private readonly outbox: EventOutbox,
    private readonly syncScheduler: PaymentSyncScheduler,
    private readonly ledger: LedgerService,
  ) {}

  async create(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payout> {
    const input = parseInput(createPayoutInput, rawInput);
    const { db } = this.context;
    const profile = await profileFor(this.context, principal.merchantId, input.profileId);
    const accounts = (await this.connectorAccounts.payoutCandidates(principal.merchantId, principal.mode)).filter(
      (account) =>
        isConnectorName(account.connectorName) &&
        CONNECTORS[account.connectorName].payouts &&
        (input.connector == null || account.connectorName === input.connector) &&
        (account.currencies.length === 0 || account.currencies.includes(input.currency)),
    );
    if (accounts.length === 0)
      throw invalidInput(
        input.connector ? 'connector' : 'currency',
        `no enabled connector account of this merchant (or of its platform) sends payouts in ${input.currency}${input.connector ? ` with ${input.connector}` : ''}`,
      );
    const country = input.country ?? null;
    const serving = accounts.filter((account) => country === null || account.countries.length === 0 || account.countries.includes(country));
    const refusal = payoutRefusal(
      { amount: input.amount, country },
      profileSettings(profile, principal.mode).payoutLimit,
      serving.length > 0 ? null : [...new Set(accounts.flatMap((account) => account.countries))],
    );
    const account: ConnectorAccount | null = refusal === null ? serving[0]! : null;
    const now = new Date();
    let event: CommittedEvent | null = null;
    const payoutId = newId('payout');
    const payout = await db.$transaction(async (tx) => {
      // Its amount leaves the merchant's balance now, or the payout is refused before anything is written.
      if (account !== null) {
        const sent = { id: payoutId, merchantId: principal.merchantId, mode: principal.mode, currency: input.currency, amount: input.amount };
        await this.ledger.payout(tx, { ...sent, connectorAccountId: account.id }, 'out');
      }
      const created = await tx.payout.create({
        data: {
          id: payoutId,
          merchantId: principal.merchantId,
          profileId: profile.id,
          mode: principal.mode,
          connectorAccountId: account?.id ?? null,
          connectorName: account?.connectorName ?? null,
          processorMerchantId: account !== null && account.merchantId !== principal.merchantId ? account.merchantId : null,
          status: refusal === null ? 'CREATED' : 'NOT_PERMITTED',
          amount: input.amount,
          currency: input.currency,
          country,
          description: input.description ?? null,
          destinationType: input.destination.type,
          destinationLast4: input.destination.type === 'card' ? last4(input.destination.card.number) : ibanLast4(input.destination.iban),
          ...(refusal === null ? {} : { errorCode: 'payout_not_permitted', errorMessage: refusal }),
          createdAt: now,
          updatedAt: now,
        },
      });
      event = await this.outbox.recordChange(tx, created, PAYOUT_STATUS_EVENTS[created.status], payoutWireObject(created));
      return created;
    });
    if (event !== null) this.outbox.afterCommit(event);
    if (account === null) return payout;
    let answer: ProcessorPayout;
    try {
      answer = await this.connectorAccounts.connectorFor(account).createPayout({
        reference: payout.id,
        amount: payout.amount,
        currency: payout.currency,
        destination: input.destination,
        description: payout.description,
      });
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      this.context.logger.warn({ payoutId: payout.id, kind: error.kind, err: error.message }, 'payout call to the processor failed');
      if (error.outcomeUnknown) return this.watched(payout);
      const refused = { payoutId: '', status: 'failed' as const, error: { code: error.processorCode ?? 'connector_error', message: error.message } };
      return (await this.apply(payout.id, refused, 'processor')).payout;
    }
    return this.watched((await this.apply(payout.id, answer, 'processor')).payout);
  }

  /** Cancels a payout the processor has not sent yet. */
  async cancel(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payout> {
    const payout = await this.get(principal, parseInput(payoutIdInput, rawInput).payoutId);
    if (!isPayoutMoveAllowed(payout.status, 'CANCELLED') || payout.connectorPayoutId === null) {
      throw new AppError('INVALID_STATE', `Only a payout not yet sent can be cancelled; this one is ${payout.status}.`, { status: payout.status });
    }
    let answer: ProcessorPayout;
    try {
      answer = await (await this.connectorOf(payout)).cancelPayout(payout.connectorPayoutId, `${payout.id}.cancel`);
    } catch (error) {
      if (!(error instanceof ConnectorError)) throw error;
      if (error.processorCode === 'invalid_state') {
        // Sent meanwhile: learn where it is, and say so as this API's own INVALID_STATE.
        const current = await this.sync(payout).catch(() => payout);
        throw new AppError('INVALID_STATE', `Only a payout not yet sent can be cancelled; this one is ${current.status}.`, { status: current.status });
      }
      throw new AppError('CONNECTOR_ERROR', `The processor did not cancel the payout: ${error.message}.`, { payoutId: payout.id, status: payout.status });
    }
    return (await this.apply(payout.id, answer, principal.keyId)).payout;
  }

  async get(principal: SecretKeyPrincipal, payoutId: string): Promise<Payout> {
    const payout = isId('payout', payoutId) ? await this.context.db.payout.findUnique({ where: { id: payoutId } }) : null;
    if (payout === null || payout.merchantId !== principal.merchantId || payout.mode !== principal.mode) throw notFound('payout', payoutId);
    return payout;
  }

  list(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payout[]> {
    const input = parseInput(listPayoutsInput, rawInput);
    return this.context.db.payout.findMany({
      where: { merchantId: principal.merchantId, mode: principal.mode, ...(input.status ? { status: input.status } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: input.first ?? 20,
    });
  }

  /** A verified processor callback about a payout of this connector account; null when it has no such payout. */
  async applyCallback(
    connectorAccountId: string,
    answer: ProcessorPayout,
    reference: string | null,
  ): Promise<{ paymentId: null; outcome: ApplyOutcome } | null> {
    const found = await this.context.db.payout.findFirst({
      where: {
        connectorAccountId,
        OR: [{ connectorPayoutId: answer.payoutId }, ...(reference !== null && isId('payout', reference) ? [{ id: reference }] : [])],
      },
      select: { id: true },
    });
    if (found === null) return null;
    return { paymentId: null, outcome: (await this.apply(found.id, answer, 'callback')).outcome };
  }

  /** One step of a payout's sync schedule (run by the worker). */
  runScheduledSync(job: ResourceSyncJob): Promise<void> {
    return runSyncStep(
      job,
      {
        load: (id) => this.context.db.payout.findUnique({ where: { id } }),
        isOpen: (payout) => OPEN_PAYOUT_STATUSES.has(payout.status),
        sync: (payout) => this.sync(payout),
        scheduleStep: (step) => this.syncScheduler.scheduleResource({ ...job, step }),
        flagExhausted: async (id) => void (await this.context.db.payout.update({ where: { id }, data: { syncExhaustedAt: new Date() } })),
      },
      this.context.logger,
    );
  }

  private async sync(payout: Payout): Promise<Payout> {
    if (!OPEN_PAYOUT_STATUSES.has(payout.status) || payout.connectorAccountId === null) return payout;
    const connector = await this.connectorOf(payout);
    const answer = await askProcessor(
      payout.connectorPayoutId,
      (id) => connector.syncPayout(id),
      () => connector.findPayoutByReference(payout.id),
    );
    return answer === null ? payout : (await this.apply(payout.id, answer, 'scheduled_sync')).payout;
  }

  /** Moves the payout to what the processor reports, along the table's rows only (learning the processor's id). */
  private async apply(payoutId: string, answer: ProcessorPayout, actor: string): Promise<{ payout: Payout; outcome: ApplyOutcome }> {
    const { row, outcome } = await applyGuardedMove<Payout>(this.context.db, this.outbox, {
      read: () => this.context.db.payout.findUniqueOrThrow({ where: { id: payoutId } }),
      plan: (payout) => {
        const target = PAYOUT_TARGETS[answer.status];
        const moves = isPayoutMoveAllowed(payout.status, target);
        if (!moves && target !== payout.status)
          this.context.logger.info({ payoutId, status: payout.status, answer: answer.status, actor }, 'ignored a payout answer no transition leads to');
        const learnsId = payout.connectorPayoutId === null && answer.payoutId !== '';
        if (!moves && !learnsId) return null;
        const move = {
          status: target,
          errorCode: answer.error?.code ?? null,
          errorMessage: answer.error?.message ?? null,
          version: { increment: 1 },
          updatedAt: new Date(),
        };
        return { ...(learnsId ? { connectorPayoutId: answer.payoutId } : {}), ...(moves ? move : {}) };
      },
      write: async (tx, payout, data) => (await tx.payout.updateManyAndReturn({ where: { id: payout.id, version: payout.version }, data }))[0],
      moved: async (tx, before, after) => {
        if (PAYOUT_HOLDING_STATUSES.has(before.status) && !PAYOUT_HOLDING_STATUSES.has(after.status)) await this.ledger.payout(tx, after, 'back');
        return [await this.outbox.recordChange(tx, after, PAYOUT_STATUS_EVENTS[after.status], payoutWireObject(after))];
      },
    });
    if (outcome === 'deferred')
      this.context.logger.warn({ payoutId, answer: answer.status }, 'payout answer deferred to sync after repeated concurrent changes');
    return { payout: row, outcome };
  }

  private async watched(payout: Payout): Promise<Payout> {
    if (OPEN_PAYOUT_STATUSES.has(payout.status)) await watchOpen({ kind: 'payout', id: payout.id }, this.syncScheduler, this.context.logger);
    return payout;
  }

  private async connectorOf(payout: Payout): Promise<Connector> {
    const account = await this.context.db.connectorAccount.findUniqueOrThrow({ where: { id: payout.connectorAccountId! } });
    return this.connectorAccounts.connectorFor(account);
  }
}
