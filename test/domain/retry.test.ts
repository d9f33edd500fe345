// Every rule of automatic retry, over every combination of its inputs.
import { describe, expect, it } from 'vitest';
import { HARD_DECLINE_CODES, retryDecision, type AttemptFailure, type RetryContext } from '../../src/modules/payments/machine/retry.ts';

const FAILURES: AttemptFailure[] = [
  { kind: 'not_processed', code: 'connector_unreachable' },
  { kind: 'declined', code: 'processing_error', retryable: true },
  { kind: 'declined', code: 'card_declined', retryable: false },
  { kind: 'declined', code: 'do_not_honor', retryable: false },
  ...[...HARD_DECLINE_CODES].flatMap((code) => [
    { kind: 'declined' as const, code, retryable: false },
    // A processor that calls a hard decline retryable is overruled.
    { kind: 'declined' as const, code, retryable: true },
    // Refused before the processor acted (an invalid number): another processor would refuse it too.
    { kind: 'not_processed' as const, code },
  ]),
];
const PROFILE_CODES: string[][] = [[], ['card_declined'], ['card_declined', 'do_not_honor']];

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
    '$failure.kind $failure.code (processor retryable: $failure.retryable), profile $context.retryableDeclineCodes, used $context.retriesUsed/2, next $context.nextConnectorAvailable',
    ({ failure, context }) => {
      const hard = HARD_DECLINE_CODES.has(failure.code);
      const worth = failure.kind === 'not_processed' || failure.retryable || context.retryableDeclineCodes.includes(failure.code);
      const expected = !hard && worth && context.retriesUsed < context.maxRetries && context.nextConnectorAvailable;
      const decision = retryDecision(failure, context);
      expect(decision.retry).toBe(expected);
      if (!decision.retry) expect(decision.reason.length).toBeGreaterThan(0);
    },
  );

  it('never retries a hard decline even when the profile lists it', () => {
    for (const code of HARD_DECLINE_CODES) {
      const decision = retryDecision(
        { kind: 'declined', code, retryable: true },
        { retriesUsed: 0, maxRetries: 5, retryableDeclineCodes: [code], nextConnectorAvailable: true },
      );
      expect(decision).toEqual({ retry: false, reason: `${code} is a hard decline` });
    }
  });

  it('names the reason for each refusal', () => {
    const base: RetryContext = { retriesUsed: 0, maxRetries: 1, retryableDeclineCodes: [], nextConnectorAvailable: true };
    expect(retryDecision({ kind: 'declined', code: 'card_declined', retryable: false }, base)).toEqual({
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
