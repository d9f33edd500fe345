// When a failed attempt is followed by another on the next eligible connector (automatic retry, as
// Hyperswitch's "gsm" rules decide) and when it is not, by the decline catalog's retry classes (src/kernel/declines.ts).
// Pure: the service asks, the tests walk every rule.
import { declineCodesOf, declineRetryOf, type DeclineCode, type DeclineRetry } from '../../../kernel/declines.ts';

/**
 * Declines that another processor would repeat, or that must not be retried at all (fraud signals, the customer's own
 * account or card): the catalog's hard class, never retried, and a profile cannot mark them retryable.
 */
export const HARD_DECLINE_CODES: ReadonlySet<string> = new Set(declineCodesOf('hard'));

/** How an attempt failed, as far as retrying is concerned. */
export type AttemptFailure =
  /** The processor answered with a failure: a code of the decline catalog, whose class says whether to send it on. */
  | { kind: 'declined'; code: DeclineCode }
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

/** The catalog's classes sent on to the next processor without the profile's say. */
const SENT_ON: ReadonlySet<DeclineRetry> = new Set(['processor_error', 'soft']);

export type RetryDecision = { retry: true } | { retry: false; reason: string };

export function retryDecision(failure: AttemptFailure, context: RetryContext): RetryDecision {
  // Whether the processor declined it or refused it before acting (an invalid number), another processor
  // would get the same card to the same end: never sent on.
  if (HARD_DECLINE_CODES.has(failure.code)) return { retry: false, reason: `${failure.code} is a hard decline` };
  // A processor error or a soft decline is sent on; another decline only when the profile lists its code.
  const worthRetrying = failure.kind === 'not_processed' || SENT_ON.has(declineRetryOf(failure.code)) || context.retryableDeclineCodes.includes(failure.code);
  if (!worthRetrying) return { retry: false, reason: `${failure.code} is not retryable` };
  if (context.retriesUsed >= context.maxRetries) return { retry: false, reason: `the profile allows ${context.maxRetries} retries` };
  if (!context.nextConnectorAvailable) return { retry: false, reason: 'no other eligible connector' };
  return { retry: true };
}

/** Bounds of the profile's settings, and of attempts per payment counting manual retries (confirming again). */
export const MAX_RETRIES_LIMIT = 5;
export const MAX_ATTEMPTS_PER_PAYMENT = 10;
