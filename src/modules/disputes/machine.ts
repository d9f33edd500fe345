// The Dispute state machine as data. A dispute (chargeback) is opened by the processor, never by the API:
// the customer's bank has taken the money back. The merchant accepts it or challenges it with evidence
// before the deadline; the network decides a challenge (won or lost), or the dispute expires unanswered, or
// it is withdrawn. Hyperswitch's DisputeStatus is the model; every status has its own event (always sent).
import type { EventType } from '../events/catalog.ts';
import { TERMINAL_INTENT_STATUSES, type IntentStatus } from '../payments/machine/statuses.ts';
import { movesOf, pathOf } from '../../kernel/state-tables.ts';

export const DISPUTE_STATUSES = ['OPENED', 'ACCEPTED', 'CHALLENGED', 'WON', 'LOST', 'EXPIRED', 'CANCELLED'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

/** What a processor says of a dispute, normalised by its connector. */
export type ProcessorDisputeStatus = 'opened' | 'accepted' | 'challenged' | 'won' | 'lost' | 'expired' | 'cancelled';

export interface DisputeTransition {
  from: DisputeStatus | null;
  to: DisputeStatus;
  trigger: string;
}

export const DISPUTE_TRANSITIONS: readonly DisputeTransition[] = [
  { from: null, to: 'OPENED', trigger: 'the processor reports a chargeback on a captured payment' },
  { from: 'OPENED', to: 'ACCEPTED', trigger: 'acceptDispute: the merchant concedes' },
  { from: 'OPENED', to: 'CHALLENGED', trigger: 'challengeDispute: the merchant submits evidence before the deadline' },
  { from: 'OPENED', to: 'EXPIRED', trigger: 'the deadline passed without a response' },
  { from: 'OPENED', to: 'CANCELLED', trigger: 'the customer or network withdrew the dispute' },
  { from: 'CHALLENGED', to: 'WON', trigger: 'the network decided for the merchant' },
  { from: 'CHALLENGED', to: 'LOST', trigger: 'the network decided for the customer' },
  { from: 'CHALLENGED', to: 'CANCELLED', trigger: 'the customer or network withdrew the dispute' },
];

/** True when a dispute may move from `from` to `to` (staying put is not a move). */
export const isDisputeMoveAllowed = movesOf(DISPUTE_TRANSITIONS);

/**
 * The statuses a processor's report of `to` takes a dispute through from `from`, shortest first (`to` last);
 * [] when it is there already; null when no rows lead there (a late or out-of-order report). A decision
 * reported before its challenge was (a lost answer) passes through CHALLENGED, so no event is skipped.
 */
export const disputePath = (from: DisputeStatus, to: DisputeStatus): DisputeStatus[] | null => pathOf(DISPUTE_TRANSITIONS, from, to);

export const DISPUTE_TARGETS: Readonly<Record<ProcessorDisputeStatus, DisputeStatus>> = {
  opened: 'OPENED',
  accepted: 'ACCEPTED',
  challenged: 'CHALLENGED',
  won: 'WON',
  lost: 'LOST',
  expired: 'EXPIRED',
  cancelled: 'CANCELLED',
};

/** Every dispute status emits its event (Hyperswitch: `dispute_*`, always). */
export const DISPUTE_STATUS_EVENTS: Readonly<Record<DisputeStatus, EventType>> = {
  OPENED: 'dispute_opened',
  ACCEPTED: 'dispute_accepted',
  CHALLENGED: 'dispute_challenged',
  WON: 'dispute_won',
  LOST: 'dispute_lost',
  EXPIRED: 'dispute_expired',
  CANCELLED: 'dispute_cancelled',
};

/** Dispute statuses in which the chargeback holds or may take the payment's money: no refund then. */
export const MONEY_DISPUTED_STATUSES: ReadonlySet<DisputeStatus> = new Set(['OPENED', 'CHALLENGED', 'ACCEPTED', 'LOST', 'EXPIRED']);

/** Why a processor's first report of a dispute is refused for good: it contradicts the payment it names. */
export type DisputeRefusal = 'dispute_currency_mismatch' | 'dispute_amount_over_captured';

/** Why a processor's first report of a dispute is not opened now: refused for good, or until the payment records its capture. */
export type DisputeHold = DisputeRefusal | 'dispute_awaiting_capture';

/**
 * Whether a reported dispute fits its payment: in the payment's currency, and of at most what was captured
 * (amountReceived). Refunds do not lower that bound: a cardholder may dispute before a refund reaches them (or
 * while it is pending, and it may yet fail), and the merchant must see that dispute to answer it with the refund.
 * Only what can never fit is refused: another currency, more than the payment could ever capture (the amount
 * plus its surcharge, all the processor was asked for and the most of its answers we accept), or more than a
 * payment whose status is final captured. Our record of a capture may lag the processor's (a capture still
 * PROCESSING here): a dispute of more than it shows waits until the payment records its capture.
 */
export function disputeHold(
  dispute: { amount: number; currency: string },
  payment: { status: IntentStatus; amount: number; surchargeAmount: number; amountReceived: number; currency: string },
): DisputeHold | null {
  if (dispute.currency !== payment.currency) return 'dispute_currency_mismatch';
  if (dispute.amount > payment.amount + payment.surchargeAmount) return 'dispute_amount_over_captured';
  if (dispute.amount <= payment.amountReceived) return null;
  return TERMINAL_INTENT_STATUSES.has(payment.status) ? 'dispute_amount_over_captured' : 'dispute_awaiting_capture';
}

/** The evidence a challenge carries: named documents as text (the sandbox's and Stripe's shape). */
export const EVIDENCE_LIMITS = { maxFields: 20, maxKeyLength: 40, maxValueLength: 5000 } as const;
const EVIDENCE_KEY = /^[a-z0-9_]+$/;

/** The first rule `evidence` breaks, with its path (`evidence.<key>`), or null when it is valid. */
export function evidenceProblem(evidence: unknown): { field: string; rule: string } | null {
  if (evidence === null || typeof evidence !== 'object' || Array.isArray(evidence))
    return { field: 'evidence', rule: 'must be an object of named text fields' };
  const entries = Object.entries(evidence);
  if (entries.length === 0 || entries.length > EVIDENCE_LIMITS.maxFields)
    return { field: 'evidence', rule: `must have 1 to ${EVIDENCE_LIMITS.maxFields} fields` };
  for (const [key, value] of entries) {
    if (!EVIDENCE_KEY.test(key) || key.length > EVIDENCE_LIMITS.maxKeyLength) {
      return { field: 'evidence', rule: `field names must be 1 to ${EVIDENCE_LIMITS.maxKeyLength} lowercase letters, digits or _` };
    }
    if (typeof value !== 'string' || value.length === 0 || value.length > EVIDENCE_LIMITS.maxValueLength || value.includes('\u0000')) {
      return { field: `evidence.${key}`, rule: `must be text of 1 to ${EVIDENCE_LIMITS.maxValueLength} characters` };
    }
  }
  return null;
}
