// Every rule of automatic retry, over every combination of its inputs: a decline by the decline catalog's class of its
// code (src/kernel/declines.ts), whatever processor sent it.
import { describe, expect, it } from 'vitest';
import { DECLINE_CATALOG, DECLINE_CODES, declineCodesOf, type DeclineRetry } from '../../src/kernel/declines.ts';
import { HARD_DECLINE_CODES, retryDecision, type AttemptFailure, type RetryContext } from '../../src/modules/payments/machine/retry.ts';

/** Whether each class is sent on to the next processor without the profile listing the code. */
const SENT_ON: Record<DeclineRetry, boolean> = { processor_error: true, soft: true, opt_in: false, hard: false };

const FAILURES: AttemptFailure[] = [
  { kind: 'not_processed', code: 'connector_unreachable' },
  ...DECLINE_CODES.map((code) => ({ kind: 'declined' as const, code })),
  // Refused before the processor acted (an invalid number): another processor would refuse it too.
  ...[...HARD_DECLINE_CODES].map((code) => ({ kind: 'not_processed' as const, code })),
];
const PROFILE_CODES: string[][] = [[], ['card_declined'], ['card_declined', 'insufficient_funds', 'do_not_honor']];

describe('retryDecision', () => {
  const cases = FAILURES.flatMap((failure) =>
    PROFILE_CODES.flatMap((retryableDeclineCodes) =>
      [0, 1, 2].flatMap((retriesUsed) =>
        [true, false].map((nextConnectorAvailable) => ({
          failure,
          context: { retriesUsed, maxRetries: 2, retryableDeclineCodes, nextConnectorAvailable } as RetryContext,
        })),
      ),
    ),
  );

  it(`covers ${cases.length} combinations`, () => expect(cases.length).toBe(FAILURES.length * 3 * 3 * 2));

  it.each(cases)(
    '$failure.kind $failure.code, profile $context.retryableDeclineCodes, used $context.retriesUsed/2, next $context.nextConnectorAvailable',
    ({ failure, context }) => {
      const hard = HARD_DECLINE_CODES.has(failure.code);
      const sentOn = failure.kind === 'not_processed' || SENT_ON[DECLINE_CATALOG[failure.code].retry];
      const worth = sentOn || context.retryableDeclineCodes.includes(failure.code);
      const expected = !hard && worth && context.retriesUsed < context.maxRetries && context.nextConnectorAvailable;
      const decision = retryDecision(failure, context);
      expect(decision.retry).toBe(expected);
      if (!decision.retry) expect(decision.reason.length).toBeGreaterThan(0);
    },
  );

  it('never retries a hard decline even when the profile lists it', () => {
    for (const code of declineCodesOf('hard')) {
      const decision = retryDecision(
        { kind: 'declined', code },
        { retriesUsed: 0, maxRetries: 5, retryableDeclineCodes: [code], nextConnectorAvailable: true },
      );
      expect(decision).toEqual({ retry: false, reason: `${code} is a hard decline` });
    }
  });

  it('hard declines are exactly the catalog’s hard class, and include fraud, lost and stolen cards', () => {
    expect([...HARD_DECLINE_CODES].sort()).toEqual(DECLINE_CODES.filter((code) => DECLINE_CATALOG[code].retry === 'hard').sort());
    for (const code of ['fraudulent', 'lost_card', 'stolen_card', 'insufficient_funds']) expect(HARD_DECLINE_CODES.has(code)).toBe(true);
  });

  it('a soft decline and a processor error are sent on without the profile; a plain decline only when the profile lists it', () => {
    const base: RetryContext = { retriesUsed: 0, maxRetries: 1, retryableDeclineCodes: [], nextConnectorAvailable: true };
    expect(retryDecision({ kind: 'declined', code: 'issuer_unavailable' }, base)).toEqual({ retry: true });
    expect(retryDecision({ kind: 'declined', code: 'processing_error' }, base)).toEqual({ retry: true });
    expect(retryDecision({ kind: 'declined', code: 'card_declined' }, base).retry).toBe(false);
    expect(retryDecision({ kind: 'declined', code: 'card_declined' }, { ...base, retryableDeclineCodes: ['card_declined'] })).toEqual({ retry: true });
    // A code no map read is not a plain decline: only a profile naming unknown_decline sends it on.
    expect(retryDecision({ kind: 'declined', code: 'unknown_decline' }, { ...base, retryableDeclineCodes: ['card_declined'] }).retry).toBe(false);
    expect(retryDecision({ kind: 'declined', code: 'unknown_decline' }, { ...base, retryableDeclineCodes: ['unknown_decline'] })).toEqual({ retry: true });
  });

  it('names the reason for each refusal', () => {
    const base: RetryContext = { retriesUsed: 0, maxRetries: 1, retryableDeclineCodes: [], nextConnectorAvailable: true };
    expect(retryDecision({ kind: 'declined', code: 'card_declined' }, base)).toEqual({
      retry: false,
      reason: 'card_declined is not retryable',
    });
    expect(retryDecision({ kind: 'not_processed', code: 'x' }, { ...base, retriesUsed: 1 })).toEqual({ retry: false, reason: 'the profile allows 1 retries' });
    expect(retryDecision({ kind: 'not_processed', code: 'x' }, { ...base, nextConnectorAvailable: false })).toEqual({
      retry: false,
      reason: 'no other eligible connector',
    });
    expect(retryDecision({ kind: 'not_processed', code: 'x' }, base)).toEqual({ retry: true });
  });
});
