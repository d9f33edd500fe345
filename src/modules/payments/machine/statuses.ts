// The statuses of PaymentIntent and PaymentAttempt, and the one mapping from an attempt's status to its
// intent's (Hyperswitch's `From<AttemptStatus> for IntentStatus`, restricted to the statuses we use).

/** The seed's seven intent states, then the completions the anchors need. */
export const INTENT_STATUSES = [
  'REQUIRES_PAYMENT_METHOD',
  'REQUIRES_CONFIRMATION',
  'PROCESSING',
  'REQUIRES_CUSTOMER_ACTION',
  'REQUIRES_CAPTURE',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'PARTIALLY_CAPTURED',
  // Not confirmed within the profile's session expiry (Hyperswitch's Expired).
  'EXPIRED',
  // Authorized for less than the amount, where the profile allows it (Hyperswitch's PartiallyAuthorizedAndRequiresCapture).
  'PARTIALLY_AUTHORIZED',
  // Voided at the processor after it was captured (Hyperswitch's CancelledPostCapture).
  'CANCELLED_POST_CAPTURE',
] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** The seed's thirteen attempt states, then the completions the anchors need. */
export const ATTEMPT_STATUSES = [
  'PAYMENT_METHOD_AWAITED',
  'CONFIRMATION_AWAITED',
  'PENDING',
  'DEVICE_DATA_COLLECTION_PENDING',
  'AUTHENTICATION_PENDING',
  'AUTHENTICATION_SUCCESSFUL',
  'AUTHENTICATION_FAILED',
  'AUTHORIZED',
  'AUTHORIZATION_FAILED',
  'CHARGED',
  'CAPTURE_INITIATED',
  'CAPTURE_FAILED',
  'VOIDED',
  // Completions: a failed attempt that a retry follows (issue of retries), partial capture, void at the processor.
  'FAILURE',
  'PARTIAL_CHARGED',
  'VOID_INITIATED',
  'VOID_FAILED',
  'EXPIRED',
  'PARTIALLY_AUTHORIZED',
  'VOID_POST_CHARGE_INITIATED',
  'VOIDED_POST_CHARGE',
] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

export type CaptureMethod = 'AUTOMATIC' | 'MANUAL';
export type AuthenticationType = 'THREE_DS' | 'NO_THREE_DS';

const INTENT_STATUS_OF: Record<AttemptStatus, IntentStatus> = {
  PAYMENT_METHOD_AWAITED: 'REQUIRES_PAYMENT_METHOD',
  CONFIRMATION_AWAITED: 'REQUIRES_CONFIRMATION',
  PENDING: 'PROCESSING',
  DEVICE_DATA_COLLECTION_PENDING: 'REQUIRES_CUSTOMER_ACTION',
  AUTHENTICATION_PENDING: 'REQUIRES_CUSTOMER_ACTION',
  AUTHENTICATION_SUCCESSFUL: 'PROCESSING',
  AUTHENTICATION_FAILED: 'FAILED',
  AUTHORIZED: 'REQUIRES_CAPTURE',
  AUTHORIZATION_FAILED: 'FAILED',
  CHARGED: 'SUCCEEDED',
  CAPTURE_INITIATED: 'PROCESSING',
  CAPTURE_FAILED: 'FAILED',
  VOIDED: 'CANCELLED',
  FAILURE: 'FAILED',
  PARTIAL_CHARGED: 'PARTIALLY_CAPTURED',
  VOID_INITIATED: 'PROCESSING',
  VOID_FAILED: 'FAILED',
  EXPIRED: 'EXPIRED',
  PARTIALLY_AUTHORIZED: 'PARTIALLY_AUTHORIZED',
  VOID_POST_CHARGE_INITIATED: 'PROCESSING',
  VOIDED_POST_CHARGE: 'CANCELLED_POST_CAPTURE',
};

/** The intent's status is always derived from its active attempt's, through this function only. */
export function intentStatusOf(attemptStatus: AttemptStatus): IntentStatus {
  return INTENT_STATUS_OF[attemptStatus];
}

/** Intent states nothing moves out of: a late or duplicate processor answer cannot change them. */
export const TERMINAL_INTENT_STATUSES: ReadonlySet<IntentStatus> = new Set([
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'PARTIALLY_CAPTURED',
  'EXPIRED',
  'CANCELLED_POST_CAPTURE',
]);

/** Intent states of a payment not yet confirmed: they expire after the profile's session expiry. */
export const UNCONFIRMED_INTENT_STATUSES: ReadonlySet<IntentStatus> = new Set(['REQUIRES_PAYMENT_METHOD', 'REQUIRES_CONFIRMATION']);

/** Intent states whose truth is at the processor: sync asks it (Hyperswitch's should_force_sync). */
export const SYNCABLE_INTENT_STATUSES: ReadonlySet<IntentStatus> = new Set([
  'PROCESSING',
  'REQUIRES_CUSTOMER_ACTION',
  'REQUIRES_CAPTURE',
  'PARTIALLY_AUTHORIZED',
]);

/** Intent states in which the payment waits on its processor, not the merchant: synced on a schedule. */
export const AWAITING_PROCESSOR_INTENT_STATUSES: ReadonlySet<IntentStatus> = new Set(['PROCESSING', 'REQUIRES_CUSTOMER_ACTION']);

/** The GraphQL/webhook spelling of a status: "REQUIRES_CAPTURE" → "requires_capture". */
export const snakeCaseStatus = (status: string): string => status.toLowerCase();
