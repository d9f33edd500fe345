// A subscription in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { z } from 'zod';
import { INTERVAL_UNITS, SUBSCRIPTION_STATUSES, type IntervalUnit, type SubscriptionStatus } from './machine.ts';
import { changeFields, changeFieldsSchema, ownerFields, ownerFieldsSchema, wireEnum, wireEnumValues, wireInstant } from '../events/wire.ts';

export const subscriptionWebhookObjectSchema = z
  .strictObject({
    subscription_id: z.string(),
    ...ownerFieldsSchema,
    status: z.enum(wireEnumValues(SUBSCRIPTION_STATUSES)),
    customer_id: z.string(),
    mandate_id: z.string().describe('The mandate each period is charged through.'),
    amount: z.number().int().describe('Charged each period, in minor units of `currency`.'),
    currency: z.string().describe('ISO 4217 code.'),
    interval: z.enum(wireEnumValues(INTERVAL_UNITS)),
    interval_count: z.number().int().describe('How many `interval`s a period lasts.'),
    paid_periods: z.number().int(),
    next_charge_at: wireInstant(),
    invoice: z
      .strictObject({
        period: z.number().int().describe('The period paid, from 1.'),
        payment_id: z.string().describe('The payment that paid it.'),
        amount_paid: z.number().int().describe('In minor units of `currency`.'),
        currency: z.string(),
        period_start: wireInstant(),
        paid_at: wireInstant(),
      })
      .describe('The invoice just paid.'),
    ...changeFieldsSchema,
  })
  .meta({
    title: 'SubscriptionWebhookObject',
    description: 'A subscription with the invoice just paid: `content.object` when `content.type` is `subscription_details`.',
  });
export type SubscriptionWebhookObject = z.infer<typeof subscriptionWebhookObjectSchema>;

/** What the subscription wire shape reads of a subscription (structurally the database row). */
export interface SubscriptionFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  customerId: string;
  mandateId: string;
  status: SubscriptionStatus;
  amount: number;
  currency: string;
  intervalUnit: IntervalUnit;
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
export function subscriptionWireObject(subscription: SubscriptionFields, invoice: PaidInvoice): SubscriptionWebhookObject {
  return {
    subscription_id: subscription.id,
    ...ownerFields(subscription),
    status: wireEnum(subscription.status),
    customer_id: subscription.customerId,
    mandate_id: subscription.mandateId,
    amount: subscription.amount,
    currency: subscription.currency,
    interval: wireEnum(subscription.intervalUnit),
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
