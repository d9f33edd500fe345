// Reading payments: one payment as a principal may see it, a payment's active attempt, and a page of them.
import { Prisma, type PaymentAttempt, type PaymentIntent } from '../../../generated/prisma/client.ts';
import { AppError, notFound } from '../../../kernel/errors.ts';
import type { Principal, SecretKeyPrincipal } from '../../../kernel/principal.ts';
import { connectionPage, decodeCursor, DEFAULT_PAGE_SIZE } from '../../../platform/db/pagination.ts';
import { parseInput } from '../../../kernel/validation.ts';
import { listPaymentsInput } from '../inputs.ts';
import type { PaymentSearch } from '../search.ts';
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

  /**
   * A page of the merchant's payments in the key's mode, newest first, with every given filter (AND). The page's
   * ids come from one SQL query (PostgreSQL drops the attempt's join when no filter reads it), which the indexes of the payment_search migration serve; the rows then by id.
   */
  async list(principal: SecretKeyPrincipal, rawInput: unknown) {
    const input = parseInput(listPaymentsInput, rawInput);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const conditions = [
      Prisma.sql`p.merchant_id = ${principal.merchantId}`,
      Prisma.sql`p.mode = ${principal.mode}::"Mode"`,
      ...(input.status ? [Prisma.sql`p.status = ${input.status}::"IntentStatus"`] : []),
      ...(input.customerId ? [Prisma.sql`p.customer_id = ${input.customerId}`] : []),
      ...(input.createdAfter ? [Prisma.sql`p.created_at >= ${input.createdAfter}`] : []),
      ...(input.createdBefore ? [Prisma.sql`p.created_at < ${input.createdBefore}`] : []),
      ...(input.currency ? [Prisma.sql`p.currency = ${input.currency}`] : []),
      // The payment's connector and method are its active attempt's, as the Payment type shows them.
      ...(input.connector ? [Prisma.sql`a.connector_name = ${input.connector}`] : []),
      ...(input.paymentMethod ? [Prisma.sql`a.payment_method_type = ${input.paymentMethod}`] : []),
      ...(input.search ? [searchCondition(input.search)] : []),
      ...olderThan(input.after),
    ];
    const ids = await this.deps.context.db.$queryRaw<{ id: string }[]>`
      SELECT p.id FROM payment_intents p LEFT JOIN payment_attempts a ON a.id = p.active_attempt_id
      WHERE ${Prisma.join(conditions, ' AND ')}
      ORDER BY p.created_at DESC, p.id DESC LIMIT ${first + 1}`;
    const rows = await this.deps.context.db.paymentIntent.findMany({ where: { id: { in: ids.map((row) => row.id) } } });
    const byId = new Map(rows.map((row) => [row.id, row]));
    return connectionPage(
      ids.map((row) => byId.get(row.id)!),
      first,
    );
  }
}

function olderThan(after: string | null | undefined): Prisma.Sql[] {
  const cursor = decodeCursor(after, 'payment');
  return cursor ? [Prisma.sql`(p.created_at, p.id) < (${cursor.createdAt}, ${cursor.id})`] : [];
}

// Each kind is answered by an index: the primary key, lower(email), the attempts' last four, the amount.
function searchCondition(search: PaymentSearch): Prisma.Sql {
  switch (search.kind) {
    case 'id':
      return Prisma.sql`p.id = ${search.id}`;
    case 'email':
      return Prisma.sql`lower(p.email) = ${search.email} AND p.email IS NOT NULL`;
    case 'last4':
      return Prisma.sql`p.id IN (SELECT payment_id FROM payment_attempts WHERE card_last4 = ${search.last4})`;
    case 'amount':
      return search.amounts.length === 0
        ? Prisma.sql`FALSE`
        : Prisma.sql`(${Prisma.join(
            search.amounts.map(({ currencies, amount }) => Prisma.sql`(p.amount = ${amount} AND p.currency = ANY(${currencies}))`),
            ' OR ',
          )})`;
  }
}
