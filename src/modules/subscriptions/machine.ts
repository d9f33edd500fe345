// Subscriptions: a customer, a mandate and a price charged every period by a scheduled job. ACTIVE while
// each period's charge succeeds (each paid period emits invoice_paid, content subscription_details);
// PAST_DUE when a charge fails (the mandate was revoked, the card declined) and nothing more is charged
// until the merchant acts; CANCELLED by the merchant, for good. Hyperswitch: only active emits an event.
import type { EventType } from '../events/catalog.ts';

export const SUBSCRIPTION_STATUSES = ['ACTIVE', 'PAST_DUE', 'CANCELLED'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const SUBSCRIPTION_TRANSITIONS: readonly { from: SubscriptionStatus | null; to: SubscriptionStatus; trigger: string }[] = [
  { from: null, to: 'ACTIVE', trigger: 'createSubscription with an active mandate of the customer' },
  { from: 'ACTIVE', to: 'ACTIVE', trigger: 'a period’s charge succeeded (invoice_paid)' },
  { from: 'ACTIVE', to: 'PAST_DUE', trigger: 'a period’s charge failed' },
  { from: 'ACTIVE', to: 'CANCELLED', trigger: 'cancelSubscription' },
  { from: 'PAST_DUE', to: 'CANCELLED', trigger: 'cancelSubscription' },
];

/** The event a paid period emits. */
export const PAID_PERIOD_EVENT: EventType = 'invoice_paid';

export const INTERVAL_UNITS = ['DAY', 'WEEK', 'MONTH'] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

/**
 * When the period after the one starting at `anchor` plus `periods` periods begins. Months are counted from
 * the anchor (not chained), so a subscription started on the 31st is charged on the last day of shorter
 * months and on the 31st again afterwards.
 */
export function periodStart(anchor: Date, unit: IntervalUnit, count: number, periods: number): Date {
  if (unit !== 'MONTH') return new Date(anchor.getTime() + periods * count * (unit === 'DAY' ? 1 : 7) * 86_400_000);
  const months = anchor.getUTCMonth() + periods * count;
  const year = anchor.getUTCFullYear() + Math.floor(months / 12);
  const month = months % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      year,
      month,
      Math.min(anchor.getUTCDate(), lastDay),
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}
