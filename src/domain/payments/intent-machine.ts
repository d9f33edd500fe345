// The PaymentIntent state machine as data. The intent's status is derived from its active attempt
// (statuses.ts); this table is the set of moves that derivation may make, checked on every commit. Rows
// marked `seed` are the seed's table letter for letter; `anchor` rows are the completions (in-flight
// capture and void show as PROCESSING, as in Hyperswitch; cancel; partial capture; failures).
import type { IntentStatus } from './statuses.ts';

export interface IntentTransition {
  from: IntentStatus | null;
  trigger: string;
  condition?: string;
  to: IntentStatus;
  source: 'seed' | 'anchor';
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
  { from: 'REQUIRES_CUSTOMER_ACTION', trigger: 'customer action result', condition: 'authenticated, capture method selection under way', to: 'PROCESSING', source: 'anchor' },
  { from: 'REQUIRES_CAPTURE', trigger: 'capture or void', condition: 'requested at the processor', to: 'PROCESSING', source: 'anchor' },
  { from: 'PROCESSING', trigger: 'capture at processor', condition: 'partial amount', to: 'PARTIALLY_CAPTURED', source: 'anchor' },
  { from: 'PROCESSING', trigger: 'void at processor', condition: 'success', to: 'CANCELLED', source: 'anchor' },
  { from: 'REQUIRES_PAYMENT_METHOD', trigger: 'cancel', to: 'CANCELLED', source: 'anchor' },
  { from: 'REQUIRES_CONFIRMATION', trigger: 'cancel', to: 'CANCELLED', source: 'anchor' },
  { from: 'REQUIRES_CUSTOMER_ACTION', trigger: 'cancel', condition: 'not voided at the processor', to: 'CANCELLED', source: 'anchor' },
];

const ALLOWED = new Set(INTENT_TRANSITIONS.map((row) => `${row.from}>${row.to}`));

/** True when the intent may move from `from` to `to` (staying put is always allowed). */
export function isIntentMoveAllowed(from: IntentStatus, to: IntentStatus): boolean {
  return from === to || ALLOWED.has(`${from}>${to}`);
}
