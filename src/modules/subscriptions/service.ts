// Subscriptions: a customer's mandate charged a price every period by the worker's sweep. A worker leases a
// due subscription (one guarded update), charges the period as a merchant-initiated payment tagged with the
// subscription and period, and records the result: the period paid (invoice_paid) and the next one
// scheduled, or PAST_DUE. A period is never charged twice: before charging, the lease holder looks for the
// period's payment, so a worker that died after charging is followed by one that records, not re-charges.
import { isUniqueViolation } from '../../platform/db/unique-violation.ts';
import { AppError, notFound } from '../../kernel/errors.ts';
import { subscriptionWireObject } from './wire.ts';
import { isId, newId } from '../../kernel/ids.ts';
import { PAID_PERIOD_EVENT, periodStart } from './machine.ts';
import type { PaymentIntent, Subscription } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { CommittedEvent, EventOutbox } from '../events/index.ts';
import type { MandateService } from '../mandates/index.ts';
import { customerId as customerIdSchema } from '../customers/index.ts';
import type { PaymentService } from '../payments/index.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createSubscriptionInput, subscriptionIdInput } from './inputs.ts';

/** The metadata key that shows the merchant which subscription and period a payment charged. */
const PERIOD_TAG = 'subscription_period';

export class SubscriptionService {
  constructor(
    private readonly context: ServiceContext,
    private readonly payments: PaymentService,
    private readonly mandates: MandateService,
    private readonly outbox: EventOutbox,
  ) {}

  async create(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Subscription> {
    const input = parseInput(createSubscriptionInput, rawInput);
    const mandate = await this.mandates.chargeable(principal, input.mandateId, input.customerId);
    const now = new Date();
    const anchorAt = input.startAt && input.startAt > now ? input.startAt : now;
    return this.context.db.subscription.create({
      data: {
        id: newId('subscription'),
        merchantId: principal.merchantId,
        profileId: mandate.profileId,
        mode: principal.mode,
        customerId: input.customerId,
        mandateId: mandate.id,
        amount: input.amount,
        currency: input.currency,
        intervalUnit: input.interval,
        intervalCount: input.intervalCount ?? 1,
        status: 'ACTIVE',
        anchorAt,
        nextChargeAt: anchorAt,
        createdAt: now,
        updatedAt: now,
      },
    });
  }

  async cancel(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Subscription> {
    const subscription = await this.get(principal, parseInput(subscriptionIdInput, rawInput).subscriptionId);
    const [cancelled] = await this.context.db.subscription.updateManyAndReturn({
      where: { id: subscription.id, status: { in: ['ACTIVE', 'PAST_DUE'] } },
      data: { status: 'CANCELLED', version: { increment: 1 }, updatedAt: new Date() },
    });
    if (cancelled === undefined) throw new AppError('INVALID_STATE', 'This subscription is already cancelled.', { status: 'CANCELLED' });
    return cancelled;
  }

  async get(principal: SecretKeyPrincipal, subscriptionId: string): Promise<Subscription> {
    const subscription = isId('subscription', subscriptionId) ? await this.context.db.subscription.findUnique({ where: { id: subscriptionId } }) : null;
    if (subscription === null || subscription.merchantId !== principal.merchantId || subscription.mode !== principal.mode)
      throw notFound('subscription', subscriptionId);
    return subscription;
  }

  list(principal: SecretKeyPrincipal, rawCustomerId: unknown): Promise<Subscription[]> {
    const customerId = parseInput(customerIdSchema, rawCustomerId);
    return this.context.db.subscription.findMany({
      where: { merchantId: principal.merchantId, mode: principal.mode, customerId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
  }

  /** Charges the due periods of at most `limit` subscriptions (the worker's sweep); returns how many it charged. */
  async chargeDue(limit: number, now = new Date()): Promise<number> {
    const free = { OR: [{ chargingUntil: null }, { chargingUntil: { lt: now } }] };
    const due = await this.context.db.subscription.findMany({
      where: { status: 'ACTIVE', nextChargeAt: { lte: now }, ...free },
      orderBy: { nextChargeAt: 'asc' },
      take: limit,
    });
    let charged = 0;
    for (const subscription of due) {
      // The lease, from the time it is taken: long enough for a charge that waits out the processor's timeout.
      // It bumps the version, so of two workers that read the row only one takes it.
      const leaseUntil = new Date(Date.now() + 3 * this.context.config.CONNECTOR_TIMEOUT_MS);
      const { count } = await this.context.db.subscription.updateMany({
        where: { id: subscription.id, version: subscription.version, status: 'ACTIVE', ...free },
        data: { chargingUntil: leaseUntil, version: { increment: 1 } },
      });
      if (count === 0) continue;
      if (await this.chargePeriod({ ...subscription, version: subscription.version + 1 })) charged += 1;
    }
    return charged;
  }

  /** Charges (or finds the charge of) the subscription's next period and records its outcome. */
  private async chargePeriod(subscription: Subscription): Promise<boolean> {
    const period = subscription.paidPeriods + 1;
    const tag = `${subscription.id}:${period}`;
    const principal: SecretKeyPrincipal = {
      kind: 'secretKey',
      merchantId: subscription.merchantId,
      mode: subscription.mode,
      keyId: `subscription:${subscription.id}`,
    };
    let payment: PaymentIntent | null = await this.context.db.paymentIntent.findUnique({ where: { subscriptionPeriod: tag } });
    let failure: { errorCode: string; errorMessage: string } | null = null;
    if (payment === null) {
      try {
        payment = await this.payments.create(
          principal,
          {
            amount: subscription.amount,
            currency: subscription.currency,
            mandateId: subscription.mandateId,
            profileId: subscription.profileId,
            confirm: true,
            description: `Subscription ${subscription.id}, period ${period}`,
            metadata: { [PERIOD_TAG]: tag },
          },
          { subscriptionPeriod: tag },
        );
      } catch (error) {
        // Another worker created this period's charge first: it records the outcome.
        if (isUniqueViolation(error, 'payment_intents_subscription_period_key')) return false;
        if (!(error instanceof AppError)) throw error;
        failure = {
          errorCode: error.code === 'PAYMENT_DECLINED' ? String(error.details['declineCode'] ?? 'payment_declined') : error.code.toLowerCase(),
          errorMessage: error.message,
        };
        payment = await this.context.db.paymentIntent.findUnique({ where: { subscriptionPeriod: tag } });
      }
    }
    if (payment?.status === 'SUCCEEDED') return this.recordPaid(subscription, period, payment);
    if (failure === null && payment !== null && payment.status !== 'FAILED') return false; // still settling: the lease runs out, and a later sweep looks again
    const pastDue = failure ?? { errorCode: payment?.errorCode ?? 'payment_failed', errorMessage: payment?.errorMessage ?? 'The period’s charge failed.' };
    await this.context.db.subscription.updateMany({
      where: { id: subscription.id, status: 'ACTIVE' },
      data: { status: 'PAST_DUE', ...pastDue, lastPaymentId: payment?.id ?? null, chargingUntil: null, version: { increment: 1 }, updatedAt: new Date() },
    });
    this.context.logger.warn(
      { subscriptionId: subscription.id, period, errorCode: pastDue.errorCode },
      'subscription charge failed; the subscription is past due',
    );
    return false;
  }

  /** The period paid: the next one scheduled and invoice_paid written in one transaction. */
  private async recordPaid(subscription: Subscription, period: number, payment: PaymentIntent): Promise<boolean> {
    let event: CommittedEvent | null = null;
    const paidAt = new Date();
    await this.context.db.$transaction(async (tx) => {
      const [paid] = await tx.subscription.updateManyAndReturn({
        where: { id: subscription.id, paidPeriods: period - 1 },
        data: {
          paidPeriods: period,
          nextChargeAt: periodStart(subscription.anchorAt, subscription.intervalUnit, subscription.intervalCount, period),
          chargingUntil: null,
          lastPaymentId: payment.id,
          errorCode: null,
          errorMessage: null,
          version: { increment: 1 },
          updatedAt: paidAt,
        },
      });
      if (paid === undefined) return;
      const invoice = {
        period,
        paymentId: payment.id,
        amount: payment.amountReceived,
        currency: payment.currency,
        periodStart: periodStart(subscription.anchorAt, subscription.intervalUnit, subscription.intervalCount, period - 1),
        paidAt,
      };
      event = await this.outbox.recordChange(tx, paid, PAID_PERIOD_EVENT, subscriptionWireObject(paid, invoice));
    });
    if (event !== null) this.outbox.afterCommit(event);
    return event !== null;
  }
}
