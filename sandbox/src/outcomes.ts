// What the sandbox processors decide about a payment, its refunds and its disputes, and about a payout, shared
// by every payment method group's table of test values (cards.ts, banks.ts, wallets.ts).

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

/** A processor's reason for failing a refund or a payout (or expiring a payout), as the object's `error` carries it. */
export interface ResourceError {
  code: string;
  message: string;
}

/** How a refund ends: the status (and error) it settles with. */
export type RefundOutcome = { status: 'succeeded' } | { status: 'failed'; error: ResourceError };

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
export const REFUND_REJECTED: ResourceError = { code: 'refund_rejected', message: 'The refund was rejected after review.' };

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

/** One move a payout makes by itself, one payout settle delay after the one before it (the first: after its creation). */
export type PayoutStep = { status: 'in_transit' | 'paid' } | { status: 'failed' | 'expired'; error: ResourceError };

/**
 * What becomes of a payout: its steps from `pending`, in order. Decided by its destination (the test card or
 * IBAN, or a card's expiry) when the payout is created and scheduled then, so the sandbox never keeps the
 * card number or the IBAN to know it.
 */
export type PayoutBehaviour = readonly PayoutStep[];

/** Sent to the destination's bank. */
const SENT: PayoutStep = { status: 'in_transit' };

/** Every destination's payouts, unless its test value says otherwise: sent, then paid. */
export const PAYOUTS_PAID: PayoutBehaviour = [SENT, { status: 'paid' }];

/** Sent, then refused by the destination's bank with `code` and `message`. */
export const payoutFails = (code: string, message: string): PayoutBehaviour => [SENT, { status: 'failed', error: { code, message } }];

/** Never claimed nor sent before the processor gave up on it. */
export const PAYOUT_EXPIRES: PayoutBehaviour = [
  { status: 'expired', error: { code: 'payout_expired', message: 'The payout was not sent in time and has expired.' } },
];

/** A card whose expiry has passed: refused before it is sent. */
export const PAYOUT_TO_EXPIRED_CARD: PayoutBehaviour = [{ status: 'failed', error: { code: 'expired_card', message: 'The destination card has expired.' } }];
