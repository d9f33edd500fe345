// A subscription in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { snakeCaseStatus } from '../payments/machine/statuses.ts';
import { changeFields, ownerFields } from '../events/wire.ts';

/** What the subscription wire shape reads of a subscription (structurally the database row). */
export interface SubscriptionFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  customerId: string;
  mandateId: string;
  status: string;
  amount: number;
  currency: string;
  intervalUnit: string;
  intervalCount: number;
  paidPeriods: number;
  nextChargeAt: Date;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The period an invoice_paid event reports. */
export interface PaidInvoice {
  period: number;
  paymentId: string;
  amount: number;
  currency: string;
  periodStart: Date;
  paidAt: Date;
}

/** A subscription in `content.object` (subscription_details), with the invoice just paid. */
export function subscriptionWireObject(subscription: SubscriptionFields, invoice: PaidInvoice): Record<string, unknown> {
  return {
    subscription_id: subscription.id,
    ...ownerFields(subscription),
    status: snakeCaseStatus(subscription.status),
    customer_id: subscription.customerId,
    mandate_id: subscription.mandateId,
    amount: subscription.amount,
    currency: subscription.currency,
    interval: subscription.intervalUnit.toLowerCase(),
    interval_count: subscription.intervalCount,
    paid_periods: subscription.paidPeriods,
    next_charge_at: subscription.nextChargeAt.toISOString(),
    invoice: {
      period: invoice.period,
      payment_id: invoice.paymentId,
      amount_paid: invoice.amount,
      currency: invoice.currency,
      period_start: invoice.periodStart.toISOString(),
      paid_at: invoice.paidAt.toISOString(),
    },
    ...changeFields(subscription),
  };
}
