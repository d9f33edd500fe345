// What the sandbox processors decide about a payment, its refunds and its disputes, shared by every payment
// method group's table of test values (cards.ts, banks.ts, wallets.ts).

/** A processor's reason for failing a payment, as the payment object's `error` carries it. */
export interface ProcessorError {
  code: string;
  message: string;
  /** Whether the same payment method may succeed if tried again (a processor fault, not a decline). */
  retryable: boolean;
}

export type Outcome = { kind: 'approved' } | { kind: 'failed'; error: ProcessorError };

export const APPROVED: Outcome = { kind: 'approved' };

export const failed = (code: string, message: string, retryable = false): Outcome & { kind: 'failed' } => ({
  kind: 'failed',
  error: { code, message, retryable },
});

/** A bank transfer's or crypto payment's funds did not arrive before the payment expired. */
export const TRANSFER_EXPIRED: ProcessorError = { code: 'transfer_expired', message: 'The funds did not arrive in time.', retryable: false };

/** A processor's reason for failing a refund, as the refund object's `error` carries it. */
export interface RefundError {
  code: string;
  message: string;
}

/** How a refund ends: the status (and error) it settles with. */
export type RefundOutcome = { status: 'succeeded' } | { status: 'failed'; error: RefundError };

/**
 * What becomes of a payment's refunds. Decided by the payment method when the payment is created and kept on
 * the payment, so the sandbox never has to keep the card number to know it.
 */
export type RefundBehaviour =
  /** Answered `succeeded`: the money is back at once. */
  | { kind: 'succeeded' }
  /** Answered `pending`, then settled as `outcome` once the refund settle delay has passed. */
  | { kind: 'settles'; outcome: RefundOutcome }
  /** Answered `requires_review`, until the test helpers approve or reject it. */
  | { kind: 'review' };

/** Every payment method's refunds, unless its test value says otherwise. */
export const REFUNDS_SUCCEED: RefundBehaviour = { kind: 'succeeded' };

/** A refund in review that the test helper rejected. */
export const REFUND_REJECTED: RefundError = { code: 'refund_rejected', message: 'The refund was rejected after review.' };

/**
 * Whether the customer's bank disputes a payment by itself. Decided by the payment method when the payment is
 * created and kept on the payment, as for refunds. The test helper opens a dispute on any succeeded payment.
 */
export type DisputeBehaviour =
  /** Never disputed unless the test helper opens one. */
  | { kind: 'none' }
  /** Disputed for all it captured, for `reason`, once the dispute delay has passed after the payment succeeded. */
  | { kind: 'opens'; reason: string };

/** Every payment method's payments, unless its test value says otherwise. */
export const NO_DISPUTE: DisputeBehaviour = { kind: 'none' };
