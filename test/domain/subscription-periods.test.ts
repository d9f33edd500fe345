// Subscription periods (src/modules/subscriptions/machine.ts): days and weeks are fixed lengths;
// months count from the anchor and clamp to the month's last day.
import { describe, expect, it } from 'vitest';
import { periodStart } from '../../src/modules/subscriptions/machine.ts';

const at = (iso: string) => new Date(iso);

describe('periodStart', () => {
  it.each([
    ['2026-01-31T10:00:00.000Z', 'DAY', 1, 1, '2026-02-01T10:00:00.000Z'],
    ['2026-01-31T10:00:00.000Z', 'WEEK', 2, 1, '2026-02-14T10:00:00.000Z'],
    ['2026-01-31T10:00:00.000Z', 'MONTH', 1, 1, '2026-02-28T10:00:00.000Z'],
    ['2026-01-31T10:00:00.000Z', 'MONTH', 1, 2, '2026-03-31T10:00:00.000Z'],
    ['2028-01-31T10:00:00.000Z', 'MONTH', 1, 1, '2028-02-29T10:00:00.000Z'],
    ['2026-11-15T00:00:00.000Z', 'MONTH', 3, 1, '2027-02-15T00:00:00.000Z'],
    ['2026-11-15T00:00:00.000Z', 'MONTH', 12, 2, '2028-11-15T00:00:00.000Z'],
    ['2026-11-15T00:00:00.000Z', 'DAY', 1, 0, '2026-11-15T00:00:00.000Z'],
  ] as const)('%s + %s×%i, period %i → %s', (anchor, unit, count, periods, expected) => {
    expect(periodStart(at(anchor), unit, count, periods).toISOString()).toBe(expected);
  });

  it('never moves backwards and never skips a month', () => {
    for (let day = 1; day <= 31; day += 1) {
      const anchor = new Date(Date.UTC(2026, 0, day, 12));
      let previous = anchor;
      for (let period = 1; period <= 36; period += 1) {
        const next = periodStart(anchor, 'MONTH', 1, period);
        expect(next.getTime()).toBeGreaterThan(previous.getTime());
        expect((next.getUTCFullYear() - 2026) * 12 + next.getUTCMonth()).toBe(period);
        previous = next;
      }
    }
  });
});
