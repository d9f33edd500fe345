// The event catalog of the seed (section 6): the 33 `event_type` values, the 6 `content.type` shapes, which
// shape each event carries, and which resource status emits which event (Hyperswitch's mapping in
// common_enums/transformers.rs is the model; statuses mapped to null send no event).
import type { IntentStatus } from '../payments/machine/statuses.ts';

export const EVENT_TYPES = [
  // Payment
  'payment_succeeded',
  'payment_failed',
  'payment_processing',
  'payment_cancelled',
  'payment_cancelled_post_capture',
  'payment_authorized',
  'payment_partially_authorized',
  'payment_captured',
  'payment_expired',
  'action_required',
  // Refund
  'refund_succeeded',
  'refund_failed',
  'refund_review',
  // Dispute
  'dispute_opened',
  'dispute_expired',
  'dispute_accepted',
  'dispute_cancelled',
  'dispute_challenged',
  'dispute_won',
  'dispute_lost',
  // Mandate
  'mandate_active',
  'mandate_revoked',
  // Payout
  'payout_success',
  'payout_failed',
  'payout_initiated',
  'payout_processing',
  'payout_cancelled',
  'payout_expired',
  'payout_reversed',
  'payout_not_permitted',
  // Invoice
  'invoice_paid',
  // Surcharge
  'surcharge_payment_succeeded',
  'surcharge_refund_succeeded',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const CONTENT_TYPES = ['payment_details', 'refund_details', 'dispute_details', 'mandate_details', 'payout_details', 'subscription_details'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** The resource each event carries: the seed's natural grouping (an invoice is a subscription's, a surcharge its payment's or refund's). */
export function contentTypeOf(eventType: EventType): ContentType {
  if (eventType.startsWith('refund_') || eventType === 'surcharge_refund_succeeded') return 'refund_details';
  if (eventType.startsWith('dispute_')) return 'dispute_details';
  if (eventType.startsWith('mandate_')) return 'mandate_details';
  if (eventType.startsWith('payout_')) return 'payout_details';
  if (eventType === 'invoice_paid') return 'subscription_details';
  return 'payment_details';
}

/** The event a payment emits on reaching each status (Hyperswitch's From<IntentStatus> for Option<EventType>). */
export const PAYMENT_STATUS_EVENTS: Readonly<Record<IntentStatus, EventType | null>> = {
  REQUIRES_PAYMENT_METHOD: null,
  REQUIRES_CONFIRMATION: null,
  PROCESSING: 'payment_processing',
  REQUIRES_CUSTOMER_ACTION: 'action_required',
  REQUIRES_CAPTURE: 'payment_authorized',
  SUCCEEDED: 'payment_succeeded',
  FAILED: 'payment_failed',
  CANCELLED: 'payment_cancelled',
  PARTIALLY_CAPTURED: 'payment_captured',
  EXPIRED: 'payment_expired',
  PARTIALLY_AUTHORIZED: 'payment_partially_authorized',
  CANCELLED_POST_CAPTURE: 'payment_cancelled_post_capture',
};
