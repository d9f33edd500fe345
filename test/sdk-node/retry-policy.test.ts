// The server SDK's retry policy as numbers (packages/client-core/src/retries.ts): Stripe's backoff, capped
// and jittered, and Retry-After read as seconds or as an HTTP date.
import { describe, expect, it } from 'vitest';
import { ApiError, apiErrorOf, retryAfterSecondsOf, retryDelayMs } from '@payments-orchestrator/client-core';

const unavailable = apiErrorOf('down', { code: 'SERVICE_UNAVAILABLE' });

describe('the retry policy', () => {
  it.each([
    [1, 0, 500],
    [1, 0.999, 500],
    [2, 0, 500],
    [2, 0.5, 750],
    [3, 0.5, 1500],
    [4, 0.5, 3000],
    [5, 0.5, 3750],
    [9, 0, 2500],
  ])('waits before retry %i, with jitter %d, %i ms', (retryNumber, random, delayMs) => {
    expect(retryDelayMs(unavailable, retryNumber, () => random)).toBeCloseTo(delayMs, 6);
  });

  it('waits what RATE_LIMITED asks up to 60 s, and retries nothing it does not know to be safe', () => {
    expect(retryDelayMs(apiErrorOf('slow down', { code: 'RATE_LIMITED', retryAfterSeconds: 60 }), 1)).toBe(60_000);
    expect(retryDelayMs(apiErrorOf('slow down', { code: 'RATE_LIMITED', retryAfterSeconds: 61 }), 1)).toBeNull();
    expect(retryDelayMs(apiErrorOf('slow down', { code: 'RATE_LIMITED' }), 1, () => 0)).toBe(500);
    expect(retryDelayMs(new ApiError('boom', { code: 'INTERNAL' }), 1)).toBeNull();
  });

  it('reads Retry-After as delta-seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-27T12:00:00Z');
    expect(retryAfterSecondsOf('7', now)).toBe(7);
    expect(retryAfterSecondsOf('Fri, 27 Nov 2026 12:00:30 GMT', now)).toBe(30);
    expect(retryAfterSecondsOf('Fri, 27 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterSecondsOf('soon', now)).toBeUndefined();
    expect(retryAfterSecondsOf(null, now)).toBeUndefined();
  });
});
