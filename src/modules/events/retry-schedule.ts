// The seed's retry schedule of outgoing webhooks (section 6, "Delivery and retry rules"; section 8):
// 16 retries after the original attempt, 17 attempts, 1441 minutes in all.
const MINUTE = 60_000;

/** RETRY_DELAYS_MS[n - 1] is the delay before the n-th retry, counted from the attempt before it. */
export const RETRY_DELAYS_MS: readonly number[] = [
  1 * MINUTE, // 1st: 1 minute after the original attempt
  5 * MINUTE, // 2nd and 3rd: 5 minutes
  5 * MINUTE,
  10 * MINUTE, // 4th to 8th: 10 minutes
  10 * MINUTE,
  10 * MINUTE,
  10 * MINUTE,
  10 * MINUTE,
  60 * MINUTE, // 9th to 13th: 1 hour
  60 * MINUTE,
  60 * MINUTE,
  60 * MINUTE,
  60 * MINUTE,
  360 * MINUTE, // 14th to 16th: 6 hours
  360 * MINUTE,
  360 * MINUTE,
];

export const MAX_RETRIES = RETRY_DELAYS_MS.length;
export const MAX_ATTEMPTS = MAX_RETRIES + 1;

/**
 * The delay after failed attempt number `attempt` (1 is the original) before the next, scaled
 * (WEBHOOK_RETRY_DELAY_SCALE) and stretched to a receiver's Retry-After within [delay, 2 × delay] (as
 * Svix does: a receiver may slow us down, never hold the schedule past double); null after the last.
 */
export function retryDelayMs(attempt: number, scale: number, retryAfterMs: number | null = null): number | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  const scaled = base * scale;
  const wanted = retryAfterMs === null ? scaled : Math.min(Math.max(retryAfterMs, scaled), 2 * scaled);
  return Math.round(wanted);
}
