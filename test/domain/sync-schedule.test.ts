// The payment sync schedule, pinned step by step: a change to it is a change of what merchants see.
import { describe, expect, it } from 'vitest';
import { PAYMENT_SYNC_DELAYS_MS, paymentSyncDelayMs } from '../../src/modules/processor-sync/schedule.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const EXPECTED_MS = [15 * SECOND, 30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 6 * HOUR];

describe('paymentSyncDelayMs', () => {
  it.each(EXPECTED_MS.map((delay, step) => ({ step, delay })))('step $step waits $delay ms at scale 1', ({ step, delay }) => {
    expect(paymentSyncDelayMs(step, 1)).toBe(delay);
  });

  it.each(EXPECTED_MS.map((delay, step) => ({ step, delay: delay / 1000 })))('step $step waits $delay ms at scale 0.001', ({ step, delay }) => {
    expect(paymentSyncDelayMs(step, 0.001)).toBe(delay);
  });

  it('rounds a scaled delay to whole milliseconds', () => {
    expect(paymentSyncDelayMs(0, 1 / 7)).toBe(2143); // 15000 / 7 = 2142.86
  });

  it('has no delay past the last step, at any scale', () => {
    expect(paymentSyncDelayMs(EXPECTED_MS.length, 1)).toBeNull();
    expect(paymentSyncDelayMs(EXPECTED_MS.length + 5, 0.001)).toBeNull();
  });

  it('runs ten steps over 9 h 48 min 45 s', () => {
    expect(PAYMENT_SYNC_DELAYS_MS).toHaveLength(10);
    expect(PAYMENT_SYNC_DELAYS_MS.reduce((sum, delay) => sum + delay, 0)).toBe(9 * HOUR + 48 * MINUTE + 45 * SECOND);
  });
});
