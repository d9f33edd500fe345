// When a payment waiting on its processor (a bank debit settling, a timed-out call, a customer who never
// came back from a redirect) is synced without anyone asking: after each delay below, counted from the
// previous sync, until it is final. After the last one the payment is flagged for the merchant, as
// Hyperswitch's payment sync task does. Fast at first (most outcomes arrive within minutes), then sparse.
export const PAYMENT_SYNC_DELAYS_MS: readonly number[] = [
  15_000, // 15 s
  30_000, // 45 s
  60_000, // 1 min 45 s
  2 * 60_000,
  5 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
  6 * 60 * 60_000, // about 10 h after the first
];

/** The delay before sync number `step` (0-based), scaled (tests and demos run the schedule fast); null after the last. */
export function paymentSyncDelayMs(step: number, scale: number): number | null {
  const delay = PAYMENT_SYNC_DELAYS_MS[step];
  return delay === undefined ? null : Math.round(delay * scale);
}
