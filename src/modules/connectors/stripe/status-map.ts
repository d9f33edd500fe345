// Stripe's objects as the port's: its statuses mapped to ours by table (one entry per status it sends, so a
// status it adds fails to compile here). Tested row by row in test/connectors/stripe-maps.test.ts.
import type { ProcessorPaymentStatus } from '../../payments/machine/attempt.ts';
import type { ProcessorDispute, ProcessorPayment, ProcessorRefund } from '../port.ts';
import { declineOf } from './decline-map.ts';
import {
  savedCardToken,
  type DISPUTE_STATUSES,
  type PAYMENT_INTENT_STATUSES,
  type REFUND_STATUSES,
  type StripeDispute,
  type StripePaymentIntent,
  type StripeRefund,
} from './wire.ts';

/** Stripe's failure code when the customer did not complete 3D Secure. */
const AUTHENTICATION_FAILURE = 'payment_intent_authentication_failure';

/** A PaymentIntent's status, some refined by its amounts or its last error. */
export const PAYMENT_STATUSES = {
  // Confirmed with confirm=true, an intent is back to requires_payment_method only after a failed attempt.
  requires_payment_method: (intent) =>
    intent.last_payment_error == null ? 'pending' : intent.last_payment_error.code === AUTHENTICATION_FAILURE ? 'authentication_failed' : 'failed',
  requires_confirmation: () => 'pending',
  requires_action: () => 'requires_authentication',
  processing: () => 'processing',
  requires_capture: (intent) => (intent.amount_capturable < intent.amount ? 'partially_authorized' : 'authorized'),
  succeeded: (intent) => (intent.amount_received < intent.amount ? 'partially_captured' : 'captured'),
  canceled: () => 'voided',
} as const satisfies Record<(typeof PAYMENT_INTENT_STATUSES)[number], (intent: StripePaymentIntent) => ProcessorPaymentStatus>;

export const REFUND_STATUS_MAP = {
  pending: 'pending',
  // The customer must give bank details for the refund (some methods): Stripe still works on it.
  requires_action: 'pending',
  succeeded: 'succeeded',
  failed: 'failed',
  canceled: 'failed',
} as const satisfies Record<(typeof REFUND_STATUSES)[number], ProcessorRefund['status']>;

export const DISPUTE_STATUS_MAP = {
  // An inquiry (warning_*) is a dispute opened at the network; its closing without a chargeback ends it.
  warning_needs_response: 'opened',
  warning_under_review: 'challenged',
  warning_closed: 'cancelled',
  needs_response: 'opened',
  under_review: 'challenged',
  won: 'won',
  lost: 'lost',
  prevented: 'cancelled',
} as const satisfies Record<(typeof DISPUTE_STATUSES)[number], ProcessorDispute['status']>;

export function toProcessorPayment(intent: StripePaymentIntent): ProcessorPayment {
  const status = PAYMENT_STATUSES[intent.status](intent);
  const redirect = intent.status === 'requires_action' ? intent.next_action?.redirect_to_url?.url : undefined;
  return {
    transactionId: intent.id,
    status,
    amountCapturable: intent.amount_capturable,
    amountCaptured: intent.amount_received,
    nextAction: redirect ? { type: 'redirect', url: redirect } : null,
    paymentMethodToken: savedCardOf(intent),
    error: (status === 'failed' || status === 'authentication_failed') && intent.last_payment_error ? declineOf(intent.last_payment_error) : null,
    ...settlementOf(intent),
  };
}

/** When the money captured settles, when the intent came with its charge's balance transaction expanded (EXPAND_SETTLEMENT). */
function settlementOf(intent: StripePaymentIntent): Pick<ProcessorPayment, 'fundsAvailableAt'> {
  const transaction = typeof intent.latest_charge === 'object' ? intent.latest_charge?.balance_transaction : null;
  if (intent.amount_received === 0 || typeof transaction !== 'object' || transaction === null) return {};
  return { fundsAvailableAt: new Date(transaction.available_on * 1000) };
}

/** The card an intent set up for future payments (setup_future_usage with a Customer: Stripe attaches it to them when paid). */
const savedCardOf = (intent: StripePaymentIntent) =>
  intent.setup_future_usage && intent.customer && intent.payment_method ? savedCardToken(intent.customer, intent.payment_method) : null;

export function toProcessorRefund(refund: StripeRefund): ProcessorRefund {
  const status = REFUND_STATUS_MAP[refund.status];
  const code = refund.failure_reason ?? 'unknown';
  return {
    refundId: refund.id,
    status,
    amount: refund.amount,
    error: status === 'failed' ? { code: `refund_${code}`, message: `Stripe did not refund (${refund.status}: ${code}).` } : null,
  };
}

/**
 * Stripe reports a dispute as `lost` alike when the merchant closed it (conceded: docs.stripe.com/api/disputes/close),
 * when its deadline passed unanswered, and when a challenge failed. Without evidence ever submitted it was not
 * challenged: reported (`reportedAt`, unix seconds) after its deadline (0: none, no response allowed), it expired; before, the merchant conceded.
 */
function disputeStatusOf(dispute: StripeDispute, reportedAt: number): ProcessorDispute['status'] {
  const details = dispute.evidence_details;
  if (dispute.status !== 'lost' || (details?.submission_count ?? 0) > 0) return DISPUTE_STATUS_MAP[dispute.status];
  return details?.due_by && reportedAt > details.due_by ? 'expired' : 'accepted';
}

/** The dispute as Stripe reported it at `reportedAt` (unix seconds: the event's creation, or the call's answer). */
export function toProcessorDispute(dispute: StripeDispute, reportedAt: number): ProcessorDispute {
  const dueBy = dispute.evidence_details?.due_by ?? null;
  return {
    disputeId: dispute.id,
    transactionId: dispute.payment_intent,
    status: disputeStatusOf(dispute, reportedAt),
    amount: dispute.amount,
    currency: dispute.currency.toUpperCase(),
    reason: dispute.reason,
    evidenceDueBy: dueBy === null ? null : new Date(dueBy * 1000),
  };
}
