// Reads payments and commits state moves. Every commit is one transaction guarded by the intent's
// version: it updates the attempt and the intent, writes a history row per attempt move and one for the
// intent's change, checks the intent's move against the intent table, and writes the outbox events the
// change emits (domain/events/catalog.ts). A stale version is CONFLICT. Starting a new attempt (a retry)
// is the one other write, under the same guard and with the same outbox.
import { AppError, notFound } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { AttemptTransition } from '../../domain/payments/attempt-machine.ts';
import { isIntentMoveAllowed, isNewAttemptMoveAllowed } from '../../domain/payments/intent-machine.ts';
import { intentStatusOf, type IntentStatus } from '../../domain/payments/statuses.ts';
import type { Prisma, PaymentAttempt, PaymentIntent } from '../../generated/prisma/client.ts';
import type { Database } from '../../db/client.ts';
import type { CommittedEvent, EventOutbox } from '../events/event-outbox.ts';

export type Payment = PaymentIntent & { activeAttempt: PaymentAttempt };

/** What a refund or dispute copies of the charge it concerns: its payment, owner, attempt and where it was made. */
export function chargeOf(payment: PaymentIntent, attempt: PaymentAttempt) {
  return {
    paymentId: payment.id,
    merchantId: payment.merchantId,
    profileId: payment.profileId,
    mode: payment.mode,
    attemptId: attempt.id,
    connectorAccountId: attempt.connectorAccountId!,
    connectorName: attempt.connectorName!,
  };
}

type Transaction = Prisma.TransactionClient;

export interface Commit {
  moves: readonly AttemptTransition[];
  attempt?: Prisma.PaymentAttemptUncheckedUpdateInput;
  intent?: Prisma.PaymentIntentUncheckedUpdateInput;
  /** Who caused it: "key_…", "processor", "sync", "redirect". */
  actor: string;
  /** More writes the change entails, in its transaction (a paid setup's saved card and mandate); their events. */
  alsoInTransaction?: (tx: Transaction, after: Payment) => Promise<CommittedEvent[]>;
}

/** A new attempt of a payment: an automatic retry on the next connector, or a manual retry of a failed payment. */
export interface NewAttempt {
  /** The move that ends the current attempt (automatic retry), or none when it has already ended (manual retry). */
  closeMove: AttemptTransition | null;
  closeFields?: Prisma.PaymentAttemptUncheckedUpdateInput;
  /** The new attempt's fields; it starts PENDING, about to be sent to its connector. */
  attempt: Omit<Prisma.PaymentAttemptUncheckedCreateInput, 'id' | 'paymentId' | 'attemptNumber' | 'status' | 'amount' | 'currency' | 'captureMethod' | 'authenticationType'>;
  intent?: Prisma.PaymentIntentUncheckedUpdateInput;
  trigger: 'retry' | 'manual_retry';
  actor: string;
}

const staleVersion = (paymentId: string) => new AppError('CONFLICT', `Payment ${paymentId} was changed by another request; retry with its current state.`);

export class PaymentStore {
  constructor(
    private readonly db: Database,
    private readonly outbox: EventOutbox,
  ) {}

  async find(paymentId: string): Promise<Payment | null> {
    const intent = await this.db.paymentIntent.findUnique({ where: { id: paymentId } });
    if (intent === null || intent.activeAttemptId === null) return null;
    const activeAttempt = await this.db.paymentAttempt.findUniqueOrThrow({ where: { id: intent.activeAttemptId } });
    return { ...intent, activeAttempt };
  }

  async get(paymentId: string): Promise<Payment> {
    const payment = await this.find(paymentId);
    if (payment === null) throw notFound('payment', paymentId);
    return payment;
  }

  /**
   * After the transaction that created it committed: the new payment (as its inserts returned it, so it is
   * not read again), told to live subscribers (dashboards).
   */
  created(payment: Payment): Payment {
    this.outbox.paymentCommitted(payment);
    return payment;
  }

  /**
   * Ends the active attempt (if it has not ended) and makes a new PENDING attempt the active one, in one
   * transaction guarded by the intent's version, with history rows for both attempts and the intent.
   */
  async startAttempt(payment: Payment, start: NewAttempt): Promise<Payment> {
    const now = new Date();
    const attemptId = newId('attempt');
    const intentFrom = payment.status;
    const intentTo = intentStatusOf('PENDING');
    if (!isNewAttemptMoveAllowed(intentFrom, intentTo)) {
      throw new Error(`a new attempt cannot move intent ${intentFrom} → ${intentTo} (not in the intent table)`);
    }
    const row = { paymentId: payment.id, actor: start.actor, createdAt: now };
    const history: Prisma.PaymentStatusHistoryCreateManyInput[] = [];
    if (start.closeMove) {
      const { from, to, trigger } = start.closeMove;
      history.push({ ...row, attemptId: payment.activeAttempt.id, subject: 'attempt', fromStatus: from, toStatus: to, trigger });
    }
    history.push({ ...row, attemptId, subject: 'attempt', fromStatus: null, toStatus: 'PENDING', trigger: start.trigger });
    if (intentFrom !== intentTo) history.push({ ...row, subject: 'intent', fromStatus: intentFrom, toStatus: intentTo, trigger: start.trigger });
    return this.write(intentFrom, history, async (tx) => {
      const intent = await this.updateIntent(tx, payment, {
        ...start.intent,
        status: intentTo,
        activeAttemptId: attemptId,
        attemptCount: { increment: 1 },
        version: { increment: 1 },
        updatedAt: now,
      });
      if (start.closeMove) {
        await tx.paymentAttempt.update({ where: { id: payment.activeAttempt.id }, data: { ...start.closeFields, status: start.closeMove.to, updatedAt: now } });
      }
      const activeAttempt = await tx.paymentAttempt.create({
        data: {
          ...start.attempt,
          id: attemptId,
          paymentId: payment.id,
          attemptNumber: payment.attemptCount + 1,
          status: 'PENDING',
          amount: payment.amount,
          currency: payment.currency,
          captureMethod: payment.captureMethod,
          authenticationType: payment.authenticationType,
          createdAt: now,
          updatedAt: now,
        },
      });
      return { ...intent, activeAttempt };
    });
  }

  /** Applies `commit` to `payment` if nobody changed it since it was read; returns the new state. */
  async commit(payment: Payment, commit: Commit): Promise<Payment> {
    const attemptTo = commit.moves.at(-1)?.to ?? payment.activeAttempt.status;
    const now = new Date();
    const history: Prisma.PaymentStatusHistoryCreateManyInput[] = [];
    for (const move of commit.moves) {
      const row = { paymentId: payment.id, trigger: move.trigger, actor: commit.actor, createdAt: now };
      history.push({ ...row, attemptId: payment.activeAttempt.id, subject: 'attempt', fromStatus: move.from, toStatus: move.to });
      const intentFrom = intentStatusOf(move.from);
      const intentTo = intentStatusOf(move.to);
      if (!isIntentMoveAllowed(intentFrom, intentTo)) {
        throw new Error(`intent move ${intentFrom} → ${intentTo} (attempt ${move.from} → ${move.to}) is not in the intent table`);
      }
      if (intentTo !== intentFrom) history.push({ ...row, subject: 'intent', fromStatus: intentFrom, toStatus: intentTo });
    }
    // A void after capture on its way, or refused, is not news for the merchant's endpoint: the payment was
    // and stays paid until the void succeeds (payment_cancelled_post_capture). Webhooks would otherwise say
    // "processing" and then "succeeded" a second time for one charge.
    const quiet = commit.moves.some((move) => move.to === 'VOID_POST_CHARGE_INITIATED' || (move.from === 'VOID_POST_CHARGE_INITIATED' && move.to === 'CHARGED'));
    return this.write(quiet ? null : payment.status, history, async (tx) => {
      const intent = await this.updateIntent(tx, payment, { ...commit.intent, status: intentStatusOf(attemptTo), version: { increment: 1 }, updatedAt: now });
      const activeAttempt = await tx.paymentAttempt.update({ where: { id: payment.activeAttempt.id }, data: { ...commit.attempt, status: attemptTo, updatedAt: now } });
      return { ...intent, activeAttempt };
    }, commit.alsoInTransaction);
  }

  /**
   * Runs `change`, `also` and the history in one transaction; when the intent's status changed (and the
   * change is not quiet), the events it emits are written in it too, and handed to the relay after commit.
   */
  private async write(
    /** The status before the change; null for a change that emits no event. */
    statusBefore: IntentStatus | null,
    history: Prisma.PaymentStatusHistoryCreateManyInput[],
    change: (tx: Transaction) => Promise<Payment>,
    also?: Commit['alsoInTransaction'],
  ): Promise<Payment> {
    let events: CommittedEvent[] = [];
    const after = await this.db.$transaction(async (tx) => {
      const changed = await change(tx);
      if (history.length > 0) await tx.paymentStatusHistory.createMany({ data: history });
      if (statusBefore !== null && changed.status !== statusBefore) events = await this.outbox.recordPaymentChange(tx, changed);
      if (also) events = [...events, ...(await also(tx, changed))];
      return changed;
    });
    for (const event of events) this.outbox.afterCommit(event);
    this.outbox.paymentCommitted(after);
    return after;
  }

  /** The guarded update: only the version that was read may be changed. */
  private async updateIntent(tx: Transaction, payment: Payment, data: Prisma.PaymentIntentUncheckedUpdateManyInput): Promise<PaymentIntent> {
    const updated = await tx.paymentIntent.updateManyAndReturn({ where: { id: payment.id, version: payment.version }, data });
    if (updated.length === 0) throw staleVersion(payment.id);
    return updated[0]!;
  }
}
