import { describe, expect, it } from 'vitest';
import { MAX_INSTANT, MIN_INSTANT, parseInstant } from '../../src/kernel/instants.ts';
import { prng } from '../support/prng.ts';

describe('parseInstant', () => {
  it.each([
    ['2026-11-23', '2026-11-23T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-11-23T10:15Z', '2026-11-23T10:15:00.000Z'],
    ['2026-11-23T10:15:30Z', '2026-11-23T10:15:30.000Z'],
    ['2026-11-23T10:15:30.123z', '2026-11-23T10:15:30.123Z'],
    ['2026-11-23T10:15:30.123+02:00', '2026-11-23T08:15:30.123Z'],
    ['2026-11-23T01:00:00-05:30', '2026-11-23T06:30:00.000Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['0050-03-01', '0050-03-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('accepts %s as %s', (text, iso) => {
    expect(parseInstant(text)?.toISOString()).toBe(iso);
  });

  it.each([
    ['1', 'a bare number (new Date reads it as 2001)'],
    ['', 'nothing'],
    ['2023-02-29', 'a day that does not exist'],
    ['2026-04-31', 'a day that does not exist'],
    ['2026-13-01', 'month 13'],
    ['2026-00-10', 'month 0'],
    ['2026-11-23T10:15', 'a time without a zone (local time is ambiguous)'],
    ['2026-11-23T24:00Z', 'hour 24'],
    ['2026-11-23T10:60Z', 'minute 60'],
    ['2026-11-23T10:15:60Z', 'second 60'],
    ['2026-11-23T10:15Z+01:00', 'two zones'],
    ['0000-12-31', 'year 0'],
    ['0001-01-01T00:00:00+01:00', 'before year 1 in UTC'],
    ['+275760-09-13T00:00:00Z', 'an expanded year'],
    ['-005000-01-01T00:00:00Z', 'a negative year'],
    ['2026-11-23 10:15Z', 'a space for T'],
    ['Mon, 23 Nov 2026 10:15:00 GMT', 'RFC 2822'],
  ])('refuses %j (%s)', (text) => {
    expect(parseInstant(text)).toBeNull();
  });

  it('round-trips 2,000 random instants between its bounds through toISOString', () => {
    const random = prng(0x1d5);
    for (let index = 0; index < 2_000; index++) {
      const instant = new Date(MIN_INSTANT.getTime() + Math.floor(random() * (MAX_INSTANT.getTime() - MIN_INSTANT.getTime())));
      expect(parseInstant(instant.toISOString())?.getTime(), instant.toISOString()).toBe(instant.getTime());
    }
  });
});
