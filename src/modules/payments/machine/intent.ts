// The PaymentIntent state machine as data. The intent's status is derived from its active attempt
// (statuses.ts); this table is the set of moves that derivation may make, checked on every commit. Rows
// marked `seed` are the seed's table letter for letter; `anchor` rows are the completions (in-flight
// capture and void show as PROCESSING, as in Hyperswitch; cancel; partial capture; failures).
import { movesOf } from '../../../kernel/state-tables.ts';
import type { IntentStatus } from './statuses.ts';

export interface IntentTransition {
  from: IntentStatus | null;
  trigger: string;
  condition?: string;
  to: IntentStatus;
  source: 'seed' | 'anchor';
  /**
   * The move happens by starting a new attempt (the intent follows its new active attempt), never by a
   * move of the current one: a processor answer cannot make it, so the `from` state stays terminal for them.
   */
  newAttempt?: true;
  /**
   * The merchant's void after capture: the one move out of SUCCEEDED a merchant makes; only
   * cancelPaymentPostCapture (where the processor supports it) makes it.
   */
  voidAfterCapture?: true;
  /**
   * A capture the processor reported done and then failed (the attempt's captureReversed rows): the one
   * processor answer that moves a paid payment, since the money was not taken after all.
   */
  captureReversed?: true;
}

export const INTENT_TRANSITIONS: readonly IntentTransition[] = [
  { from: null, trigger: 'payments API called with amount and currency', condition: 'payment created', to: 'REQUIRES_PAYMENT_METHOD', source: 'seed' },
  { from: 'REQUIRES_PAYMENT_METHOD', trigger: 'payment method supplied', to: 'REQUIRES_CONFIRMATION', source: 'seed' },
  { from: 'REQUIRES_CONFIRMATION', trigger: 'confirm', to: 'PROCESSING', source: 'seed' },
  { from: 'PROCESSING', trigger: 'auth type selection', condition: '3DS', to: 'REQUIRES_CUSTOMER_ACTION', source: 'seed' },
  { from: 'PROCESSING', trigger: 'auth type selection', condition: 'no 3DS, capture method manual', to: 'REQUIRES_CAPTURE', source: 'seed' },
  { from: 'PROCESSING', trigger: 'auth type selection', condition: 'no 3DS, capture method automatic', to: 'SUCCEEDED', source: 'seed' },
  { from: 'REQUIRES_CUSTOMER_ACTION', trigger: 'customer action result', condition: 'success, capture method manual', to: 'REQUIRES_CAPTURE', source: 'seed' },
  { from: 'REQUIRES_CUSTOMER_ACTION', trigger: 'customer action result', condition: 'success, capture method automatic', to: 'SUCCEEDED', source: 'seed' },
  { from: 'REQUIRES_CUSTOMER_ACTION', trigger: 'customer action result', condition: 'failure', to: 'FAILED', source: 'seed' },
  { from: 'REQUIRES_CAPTURE', trigger: 'capture', to: 'SUCCEEDED', source: 'seed' },
  // Completions.
  { from: 'PROCESSING', trigger: 'processor call', condition: 'fails', to: 'FAILED', source: 'anchor' },
  {
    from: 'REQUIRES_CUSTOMER_ACTION',
    trigger: 'customer action result',
    condition: 'authenticated, capture method selection under way',
    to: 'PROCESSING',
    source: 'anchor',
  },
  { from: 'REQUIRES_CAPTURE', trigger: 'capture or void', condition: 'requested at the processor', to: 'PROCESSING', source: 'anchor' },
  { from: 'PROCESSING', trigger: 'capture at processor', condition: 'partial amount', to: 'PARTIALLY_CAPTURED', source: 'anchor' },
  { from: 'PROCESSING', trigger: 'void at processor', condition: 'success', to: 'CANCELLED', source: 'anchor' },
  { from: 'REQUIRES_PAYMENT_METHOD', trigger: 'cancel', to: 'CANCELLED', source: 'anchor' },
  { from: 'REQUIRES_CONFIRMATION', trigger: 'cancel', to: 'CANCELLED', source: 'anchor' },
  { from: 'REQUIRES_CUSTOMER_ACTION', trigger: 'cancel', condition: 'not voided at the processor', to: 'CANCELLED', source: 'anchor' },
  {
    from: 'PROCESSING',
    trigger: 'processor call',
    condition: 'less than the amount authorized, partial authorization allowed',
    to: 'PARTIALLY_AUTHORIZED',
    source: 'anchor',
  },
  { from: 'PARTIALLY_AUTHORIZED', trigger: 'capture or void', condition: 'requested at the processor', to: 'PROCESSING', source: 'anchor' },
  {
    from: 'PROCESSING',
    trigger: 'capture or void at processor',
    condition: 'the request never reached the processor',
    to: 'PARTIALLY_AUTHORIZED',
    source: 'anchor',
  },
  { from: 'SUCCEEDED', trigger: 'void after capture', condition: 'requested at the processor', to: 'PROCESSING', source: 'anchor', voidAfterCapture: true },
  { from: 'PROCESSING', trigger: 'void after capture at processor', condition: 'success', to: 'CANCELLED_POST_CAPTURE', source: 'anchor' },
  {
    from: 'SUCCEEDED',
    trigger: 'capture failed at the processor',
    condition: 'after it was reported done',
    to: 'FAILED',
    source: 'anchor',
    captureReversed: true,
  },
  {
    from: 'PARTIALLY_CAPTURED',
    trigger: 'capture failed at the processor',
    condition: 'after it was reported done',
    to: 'FAILED',
    source: 'anchor',
    captureReversed: true,
  },
  { from: 'REQUIRES_PAYMENT_METHOD', trigger: 'session expiry', condition: 'not confirmed in time', to: 'EXPIRED', source: 'anchor' },
  { from: 'REQUIRES_CONFIRMATION', trigger: 'session expiry', condition: 'not confirmed in time', to: 'EXPIRED', source: 'anchor' },
  // Hyperswitch's manual retry: a failed payment confirmed again, with another method, starts a new attempt.
  { from: 'FAILED', trigger: 'confirm again', condition: 'manual retry with another payment method', to: 'PROCESSING', source: 'anchor', newAttempt: true },
];

const isAttemptMove = movesOf(INTENT_TRANSITIONS.filter((row) => !row.newAttempt));
const isNewAttemptMove = movesOf(INTENT_TRANSITIONS.filter((row) => row.newAttempt));

/** True when a move of the active attempt may take the intent from `from` to `to` (staying put is always allowed). */
export function isIntentMoveAllowed(from: IntentStatus, to: IntentStatus): boolean {
  return from === to || isAttemptMove(from, to);
}

/** True when starting a new attempt may take the intent from `from` to `to` (a retry keeps it PROCESSING). */
export function isNewAttemptMoveAllowed(from: IntentStatus, to: IntentStatus): boolean {
  return from === to || isNewAttemptMove(from, to);
}
