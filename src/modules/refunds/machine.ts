// The Refund state machine as data, and the money rule every refund obeys. A refund starts PENDING when it
// is sent to the processor; the processor decides it at once or later (a callback, a sync): SUCCEEDED,
// FAILED, or REVIEW (held by the processor, decided later). Hyperswitch's RefundStatus is the model
// (pending, success, failure, manual_review); its `transaction_failure` (never sent) is FAILED here.
import type { EventType } from '../events/catalog.ts';
import { movesOf } from '../../kernel/state-tables.ts';
import type { IntentStatus } from '../payments/machine/statuses.ts';

export const REFUND_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED', 'REVIEW'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** What a processor says of a refund, normalised by its connector. */
export type ProcessorRefundStatus = 'pending' | 'succeeded' | 'failed' | 'review';

export interface RefundTransition {
  from: RefundStatus | null;
  to: RefundStatus;
  trigger: string;
}

export const REFUND_TRANSITIONS: readonly RefundTransition[] = [
  { from: null, to: 'PENDING', trigger: 'createRefund: the amount is reserved and the refund sent to the processor' },
  { from: 'PENDING', to: 'SUCCEEDED', trigger: 'the processor returned the funds' },
  { from: 'PENDING', to: 'FAILED', trigger: 'the processor refused or could not return the funds' },
  { from: 'PENDING', to: 'REVIEW', trigger: 'the processor holds the refund for review' },
  { from: 'REVIEW', to: 'SUCCEEDED', trigger: 'the review approved it and the funds were returned' },
  { from: 'REVIEW', to: 'FAILED', trigger: 'the review rejected it' },
];

/** True when a refund may move from `from` to `to` (staying put is not a move). */
export const isRefundMoveAllowed = movesOf(REFUND_TRANSITIONS);

export const REFUND_TARGETS: Readonly<Record<ProcessorRefundStatus, RefundStatus>> = {
  pending: 'PENDING',
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  review: 'REVIEW',
};

/** The event each refund status emits (Hyperswitch's mapping, with `refund_review` of the seed for REVIEW). */
export const REFUND_STATUS_EVENTS: Readonly<Record<RefundStatus, EventType | null>> = {
  PENDING: null,
  SUCCEEDED: 'refund_succeeded',
  FAILED: 'refund_failed',
  REVIEW: 'refund_review',
};

/** Statuses whose amount counts as refunded (reserved): everything but a failed refund, which gives it back. */
export const RESERVING_REFUND_STATUSES: ReadonlySet<RefundStatus> = new Set(['PENDING', 'REVIEW', 'SUCCEEDED']);

/** Statuses still waiting on the processor, synced on a schedule. */
export const OPEN_REFUND_STATUSES: ReadonlySet<RefundStatus> = new Set(['PENDING', 'REVIEW']);

/** Payments whose captured money can be refunded. */
export const REFUNDABLE_PAYMENT_STATUSES: ReadonlySet<IntentStatus> = new Set(['SUCCEEDED', 'PARTIALLY_CAPTURED']);

/**
 * The amount a refund request may take: `requested`, or everything not yet refunded when it is omitted.
 * `refundable` is what was captured less what refunds already hold (RESERVING_REFUND_STATUSES).
 * Returns the amount, or the rule the request breaks.
 */
export function refundAmount(requested: number | undefined, refundable: number): { amount: number } | { problem: string } {
  if (refundable <= 0) return { problem: 'nothing is left to refund: the captured amount is fully refunded or held by pending refunds' };
  if (requested === undefined) return { amount: refundable };
  if (!Number.isSafeInteger(requested) || requested < 1) return { problem: 'must be a whole number of minor units, at least 1' };
  if (requested > refundable) return { problem: `must be at most ${refundable}, the captured amount not yet refunded or held by pending refunds` };
  return { amount: requested };
}
