// Instants the API accepts: ISO 8601 dates or date-times with a zone (Z or ±hh:mm), in years 1 to 9999,
// on real calendar days. Narrower than `new Date(text)`, which reads "1" as 2001, rolls 30 February over
// to 1 March, and yields years PostgreSQL cannot store.
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/i;

export const MIN_INSTANT = new Date('0001-01-01T00:00:00Z');
export const MAX_INSTANT = new Date('9999-12-31T23:59:59.999Z');

/** The instant `text` names, or null when it is not one this API accepts. */
export function parseInstant(text: string): Date | null {
  const match = ISO_8601.exec(text);
  if (!match) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0, offsetHour = 0, offsetMinute = 0] = match
    .slice(1)
    .map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const calendarDay = new Date(Date.UTC(2000, month! - 1, day));
  calendarDay.setUTCFullYear(year!); // Date.UTC would read years 0–99 as 1900–1999
  if (calendarDay.getUTCMonth() !== month! - 1 || calendarDay.getUTCDate() !== day) return null;
  if (hour > 23 || minute > 59 || second > 59 || offsetHour > 23 || offsetMinute > 59) return null;
  const instant = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(instant.getTime()) || instant < MIN_INSTANT || instant > MAX_INSTANT) return null;
  return instant;
}
