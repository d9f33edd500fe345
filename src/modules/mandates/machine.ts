// The Mandate state machine as data: the customer's permission to be charged off session with a saved card.
// It is ACTIVE from the moment its setup payment is paid, and REVOKED for good by the merchant
// (revokeMandate) or by the customer's bank (a processor callback); a revoked mandate is never charged.
import type { EventType } from '../events/catalog.ts';
import { sourcesOf } from '../../kernel/state-tables.ts';

export const MANDATE_STATUSES = ['ACTIVE', 'REVOKED'] as const;
export type MandateStatus = (typeof MANDATE_STATUSES)[number];

export interface MandateTransition {
  from: MandateStatus | null;
  to: MandateStatus;
  trigger: string;
}

export const MANDATE_TRANSITIONS: readonly MandateTransition[] = [
  { from: null, to: 'ACTIVE', trigger: 'a payment with setupFutureUsage OFF_SESSION and a customer was paid with a card' },
  { from: 'ACTIVE', to: 'REVOKED', trigger: 'revokeMandate, or the processor reports the customer revoked it' },
];

/** The statuses a mandate may be revoked from (the revocation's guarded update takes only these). */
export const REVOCABLE_MANDATE_STATUSES: readonly MandateStatus[] = sourcesOf(MANDATE_TRANSITIONS, 'REVOKED');

/** Hyperswitch's mapping: active and revoked have events (its inactive and pending have none). */
export const MANDATE_STATUS_EVENTS: Readonly<Record<MandateStatus, EventType>> = {
  ACTIVE: 'mandate_active',
  REVOKED: 'mandate_revoked',
};
