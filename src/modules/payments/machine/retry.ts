// When a failed attempt is followed by another on the next eligible connector (automatic retry, as
// Hyperswitch's "gsm" rules decide) and when it is not. Pure: the service asks, the tests walk every rule.

/**
 * Declines that another processor would repeat, or that must not be retried at all (fraud signals, the
 * customer's own account or card): never retried, and a profile cannot mark them retryable.
 */
export const HARD_DECLINE_CODES: ReadonlySet<string> = new Set([
  'stolen_card',
  'lost_card',
  'pickup_card',
  'fraudulent',
  'insufficient_funds',
  'expired_card',
  'incorrect_cvc',
  'invalid_number',
  'authentication_failed',
  'account_closed',
]);

/** How an attempt failed, as far as retrying is concerned. */
export type AttemptFailure =
  /** The processor answered with a failure; `retryable` is its own hint (a processing error, an unsupported card). */
  | { kind: 'declined'; code: string; retryable: boolean }
  /** The processor refused the request before acting, or could not be reached at all: nothing happened there. */
  | { kind: 'not_processed'; code: string };

export interface RetryContext {
  /** Attempts already made on this payment by automatic retry (the first attempt not counted). */
  retriesUsed: number;
  /** The profile's bound on automatic retries. */
  maxRetries: number;
  /** Decline codes the profile treats as worth another connector. */
  retryableDeclineCodes: readonly string[];
  /** Whether an eligible connector not yet tried remains. */
  nextConnectorAvailable: boolean;
}

export type RetryDecision = { retry: true } | { retry: false; reason: string };

export function retryDecision(failure: AttemptFailure, context: RetryContext): RetryDecision {
  // Whether the processor declined it or refused it before acting (an invalid number), another processor
  // would get the same card to the same end: never sent on.
  if (HARD_DECLINE_CODES.has(failure.code)) return { retry: false, reason: `${failure.code} is a hard decline` };
  const worthRetrying = failure.kind === 'not_processed' || failure.retryable || context.retryableDeclineCodes.includes(failure.code);
  if (!worthRetrying) return { retry: false, reason: `${failure.code} is not retryable` };
  if (context.retriesUsed >= context.maxRetries) return { retry: false, reason: `the profile allows ${context.maxRetries} retries` };
  if (!context.nextConnectorAvailable) return { retry: false, reason: 'no other eligible connector' };
  return { retry: true };
}

/** Bounds of the profile's settings, and of attempts per payment counting manual retries (confirming again). */
export const MAX_RETRIES_LIMIT = 5;
export const MAX_ATTEMPTS_PER_PAYMENT = 10;
