// Reads payments and commits state moves. Every commit is one transaction guarded by the intent's
// version: it updates the attempt and the intent, writes a history row per attempt move and one for the
// intent's change, and checks the intent's move against the intent table. A stale version is CONFLICT.
import { AppError, notFound } from '../../domain/errors.ts';
import type { AttemptTransition } from '../../domain/payments/attempt-machine.ts';
import { isIntentMoveAllowed } from '../../domain/payments/intent-machine.ts';
import { intentStatusOf } from '../../domain/payments/statuses.ts';
import type { Prisma, PaymentAttempt, PaymentIntent } from '../../generated/prisma/client.ts';
import type { Database } from '../../db/client.ts';

export type Payment = PaymentIntent & { activeAttempt: PaymentAttempt };

export interface Commit {
  moves: readonly AttemptTransition[];
  attempt?: Prisma.PaymentAttemptUncheckedUpdateInput;
  intent?: Prisma.PaymentIntentUncheckedUpdateInput;
  /** Who caused it: "key_…", "processor", "sync", "redirect". */
  actor: string;
}

export class PaymentStore {
  constructor(private readonly db: Database) {}

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
    await this.db.$transaction(async (tx) => {
      const updated = await tx.paymentIntent.updateMany({
        where: { id: payment.id, version: payment.version },
        data: { ...commit.intent, status: intentStatusOf(attemptTo), version: { increment: 1 }, updatedAt: now },
      });
      if (updated.count === 0) {
        throw new AppError('CONFLICT', `Payment ${payment.id} was changed by another request; retry with its current state.`);
      }
      await tx.paymentAttempt.update({ where: { id: payment.activeAttempt.id }, data: { ...commit.attempt, status: attemptTo, updatedAt: now } });
      if (history.length > 0) await tx.paymentStatusHistory.createMany({ data: history });
    });
    return this.get(payment.id);
  }
}
