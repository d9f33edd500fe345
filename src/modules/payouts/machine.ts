// The Payout state machine as data: money sent from the merchant to a card or bank account. A payout the
// merchant's own rules forbid (over its profile's limit, a country its connector does not serve) is
// NOT_PERMITTED at once and never reaches a processor. Otherwise it is CREATED, sent, and moves with the
// processor's answers, callbacks and syncs: INITIATED (accepted, not yet sent; cancellable), PROCESSING (in
// transit), SUCCEEDED; or FAILED, CANCELLED, EXPIRED; a paid payout the bank sends back is REVERSED.
// Hyperswitch's PayoutStatus and its payout_* events are the model.
import type { EventType } from '../events/catalog.ts';
import { movesOf } from '../../kernel/state-tables.ts';

export const PAYOUT_STATUSES = ['CREATED', 'INITIATED', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'REVERSED', 'NOT_PERMITTED'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** What a processor says of a payout, normalised by its connector. */
export type ProcessorPayoutStatus = 'initiated' | 'processing' | 'succeeded' | 'failed' | 'cancelled' | 'expired' | 'reversed';

export interface PayoutTransition {
  from: PayoutStatus | null;
  to: PayoutStatus;
  trigger: string;
}

const FIRST_ANSWERS = ['INITIATED', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED'] as const;

export const PAYOUT_TRANSITIONS: readonly PayoutTransition[] = [
  { from: null, to: 'CREATED', trigger: 'createPayout: permitted, about to be sent to the processor' },
  { from: null, to: 'NOT_PERMITTED', trigger: 'createPayout: over the profile’s payout limit, or to a country no payout connector serves' },
  // The processor's first answer (or a sync after a lost one) may already be any of its states.
  ...FIRST_ANSWERS.map((to) => ({ from: 'CREATED' as const, to, trigger: 'the processor’s answer' })),
  { from: 'INITIATED', to: 'PROCESSING', trigger: 'sent to the bank' },
  { from: 'INITIATED', to: 'SUCCEEDED', trigger: 'paid' },
  { from: 'INITIATED', to: 'FAILED', trigger: 'refused by the bank' },
  { from: 'INITIATED', to: 'CANCELLED', trigger: 'cancelPayout before it was sent' },
  { from: 'INITIATED', to: 'EXPIRED', trigger: 'not sent in time' },
  { from: 'PROCESSING', to: 'SUCCEEDED', trigger: 'paid' },
  { from: 'PROCESSING', to: 'FAILED', trigger: 'refused by the bank' },
  { from: 'SUCCEEDED', to: 'REVERSED', trigger: 'the bank sent the money back' },
];

/** True when a payout may move from `from` to `to` (staying put is not a move). */
export const isPayoutMoveAllowed = movesOf(PAYOUT_TRANSITIONS);

/**
 * The statuses in which a payout holds its amount out of the merchant's balance (docs/ledger.md): from its
 * creation until it fails, is cancelled or expires, or the bank sends it back, which gives the amount back.
 */
export const PAYOUT_HOLDING_STATUSES: ReadonlySet<PayoutStatus> = new Set(['CREATED', 'INITIATED', 'PROCESSING', 'SUCCEEDED']);

export const PAYOUT_TARGETS: Readonly<Record<ProcessorPayoutStatus, PayoutStatus>> = {
  initiated: 'INITIATED',
  processing: 'PROCESSING',
  succeeded: 'SUCCEEDED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
  expired: 'EXPIRED',
  reversed: 'REVERSED',
};

/** The event each status emits (CREATED, before the processor answered, has none). */
export const PAYOUT_STATUS_EVENTS: Readonly<Record<PayoutStatus, EventType | null>> = {
  CREATED: null,
  INITIATED: 'payout_initiated',
  PROCESSING: 'payout_processing',
  SUCCEEDED: 'payout_success',
  FAILED: 'payout_failed',
  CANCELLED: 'payout_cancelled',
  EXPIRED: 'payout_expired',
  REVERSED: 'payout_reversed',
  NOT_PERMITTED: 'payout_not_permitted',
};

/** Statuses still moving at the processor without the merchant: synced on a schedule. */
export const OPEN_PAYOUT_STATUSES: ReadonlySet<PayoutStatus> = new Set(['CREATED', 'INITIATED', 'PROCESSING']);

/**
 * Why a payout may not be made, or null: over `limit` (the profile's largest payout, null for none), or to a
 * country no eligible connector serves (`countriesServed` null when one serves every country).
 */
export function payoutRefusal(
  payout: { amount: number; country: string | null },
  limit: number | null,
  countriesServed: readonly string[] | null,
): string | null {
  if (limit !== null && payout.amount > limit) return `the amount ${payout.amount} is over this profile's payout limit of ${limit}`;
  if (payout.country !== null && countriesServed !== null && !countriesServed.includes(payout.country)) {
    return `no payout connector of this merchant serves ${payout.country}`;
  }
  return null;
}
