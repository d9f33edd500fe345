// Reading payments: one payment as a principal may see it, a payment's active attempt, and a page of them.
import type { PaymentAttempt, PaymentIntent, Prisma } from '../../../generated/prisma/client.ts';
import { AppError, notFound } from '../../../kernel/errors.ts';
import type { Principal, SecretKeyPrincipal } from '../../../kernel/principal.ts';
import { connectionPage, DEFAULT_PAGE_SIZE, olderThanCursor } from '../../../platform/db/pagination.ts';
import { parseInput } from '../../../kernel/validation.ts';
import { listPaymentsInput } from '../inputs.ts';
import type { Payment } from '../store.ts';
import type { PaymentDependencies } from './dependencies.ts';

export class PaymentReads {
  constructor(private readonly deps: PaymentDependencies) {}

  /**
   * A payment's active attempt: the one it carries when this service returned it (the state it committed, so
   * a subscription's payload never mixes with a later read), otherwise read by id. Prisma batches the
   * findUnique reads of one tick into one query, so a page of payments costs one read, not one each.
   */
  async activeAttemptOf(payment: PaymentIntent | Payment): Promise<PaymentAttempt> {
    if ('activeAttempt' in payment) return payment.activeAttempt;
    return this.deps.context.db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.activeAttemptId! } });
  }

  /** The payment, if `principal` may see it: its merchant's key of the same mode, or a publishable key with its client secret. */
  async getVisible(principal: Principal, paymentId: string, clientSecret?: string | null): Promise<Payment> {
    if (principal.kind === 'publishableKey') {
      if (!clientSecret || this.deps.keys.paymentIdOfClientSecret(clientSecret) !== paymentId) {
        throw new AppError('FORBIDDEN', 'A publishable key needs this payment’s client secret.', { field: 'clientSecret' });
      }
    } else if (principal.kind !== 'secretKey') {
      throw new AppError('FORBIDDEN', 'This operation needs a secret key, or a publishable key with the client secret.');
    }
    const payment = await this.deps.store.find(paymentId);
    if (payment === null || payment.merchantId !== principal.merchantId) throw notFound('payment', paymentId);
    if (payment.mode !== principal.mode) {
      throw new AppError(
        'NOT_FOUND',
        `No payment with id "${paymentId}" exists in ${principal.mode.toLowerCase()} mode; it is a ${payment.mode.toLowerCase()} payment.`,
      );
    }
    return payment;
  }

  async list(principal: SecretKeyPrincipal, rawInput: unknown) {
    const input = parseInput(listPaymentsInput, rawInput);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const where: Prisma.PaymentIntentWhereInput = {
      merchantId: principal.merchantId,
      mode: principal.mode,
      ...(input.status ? { status: input.status as Payment['status'] } : {}),
      ...(input.customerId ? { customerId: input.customerId } : {}),
      createdAt: { ...(input.createdAfter ? { gte: input.createdAfter } : {}), ...(input.createdBefore ? { lt: input.createdBefore } : {}) },
      ...olderThanCursor(input.after, 'payment'),
    };
    const rows = await this.deps.context.db.paymentIntent.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: first + 1 });
    return connectionPage(rows, first);
  }
}
