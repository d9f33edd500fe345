// When a request is tried again, and after how long: Stripe's library's policy (stripe-node's
// RequestSender: exponential backoff from 0.5 s, at most 5 s, jittered to [half, whole], never under 0.5 s),
// honouring the service's Retry-After on RATE_LIMITED (docs/api.md, "Errors"), as stripe-python does.
import { ApiError, ConflictError, ConnectionError, RateLimitError, ServiceUnavailableError } from './errors.ts';

export const INITIAL_RETRY_DELAY_MS = 500;
export const MAX_RETRY_DELAY_MS = 5_000;
/** A Retry-After longer than this is not waited for: the error reaches the caller, who decides. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Errors after which the same request (with the same idempotency key) may succeed: no answer came, the service
 * was unavailable, it asked to slow down, or a concurrent request (the first try, still running) held the key.
 */
const RETRYABLE_ERRORS = [ConnectionError, ServiceUnavailableError, RateLimitError, ConflictError];

/** Whether `error` says nothing of the request's outcome: the same request may still succeed (or has already). */
export const isTransient = (error: ApiError) => RETRYABLE_ERRORS.some((retryable) => error instanceof retryable);

/**
 * The delay before retry number `retryNumber` (1 for the first retry) after `error`, in ms; null when the error
 * is not worth retrying. `random` is in [0, 1) (Math.random), injectable so tests assert exact delays.
 */
export function retryDelayMs(error: ApiError, retryNumber: number, random: () => number = Math.random): number | null {
  if (!isTransient(error)) return null;
  const retryAfterSeconds = error instanceof RateLimitError ? error.retryAfterSeconds : undefined;
  if (retryAfterSeconds !== undefined) {
    const retryAfterMs = retryAfterSeconds * 1000;
    return retryAfterMs <= MAX_RETRY_AFTER_MS ? retryAfterMs : null;
  }
  const backoffMs = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** (retryNumber - 1), MAX_RETRY_DELAY_MS);
  // Jitter spreads the retries of many clients refused at once over [half, whole] of the backoff.
  return Math.max(INITIAL_RETRY_DELAY_MS, backoffMs * 0.5 * (1 + random()));
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110), in seconds from `now`; undefined when absent or unreadable. */
export function retryAfterSecondsOf(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
