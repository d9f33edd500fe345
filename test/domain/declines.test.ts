// The decline catalog (src/kernel/declines.ts) is the one list: every processor's map lands on it, its hard class is
// retry.ts's, and docs/declines.md shows each code with its class.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DECLINE_CATALOG, DECLINE_CODES, declineRetryOf, isDeclineCode, UNKNOWN_DECLINE } from '../../src/kernel/declines.ts';
import { REFUSAL_REASONS } from '../../src/modules/connectors/adyen/decline-map.ts';
import { DECLINE_CODES as STRIPE_DECLINE_CODES } from '../../src/modules/connectors/stripe/decline-map.ts';
import { HARD_DECLINE_CODES } from '../../src/modules/payments/machine/retry.ts';

const page = readFileSync(new URL('../../docs/declines.md', import.meta.url), 'utf8');

describe('the decline catalog', () => {
  it.each(DECLINE_CODES)('%s: a lower-case code with a meaning, in docs/declines.md with its class', (code) => {
    const { meaning, retry } = DECLINE_CATALOG[code];
    expect(code).toMatch(/^[a-z_]+$/);
    expect(meaning.trim().length).toBeGreaterThan(0);
    expect(page).toContain(`| \`${code}\` | ${meaning} | \`${retry}\` |`);
  });

  it('every row of every processor’s map lands on a catalog code', () => {
    const mapped = [...Object.values(STRIPE_DECLINE_CODES), ...Object.values(REFUSAL_REASONS).map((row) => row.code)];
    expect(mapped.filter((code) => !isDeclineCode(code))).toEqual([]);
  });

  it('an unknown code is a decline of its own, not sent on without the profile naming it, nor hard (the same card may be confirmed again)', () => {
    expect(UNKNOWN_DECLINE).toBe('unknown_decline');
    expect(UNKNOWN_DECLINE).not.toBe('card_declined');
    expect(declineRetryOf(UNKNOWN_DECLINE)).toBe('opt_in');
    expect(declineRetryOf('something_no_processor_sent')).toBe('opt_in');
    expect(isDeclineCode('constructor')).toBe(false);
  });

  it('keeps the codes merchants already see, the hard ones hard', () => {
    const hard = ['insufficient_funds', 'expired_card', 'incorrect_cvc', 'invalid_number', 'lost_card', 'stolen_card', 'pickup_card', 'fraudulent'];
    for (const code of [...hard, 'authentication_failed', 'account_closed']) expect(HARD_DECLINE_CODES.has(code)).toBe(true);
    expect(declineRetryOf('card_declined')).toBe('opt_in');
    expect(declineRetryOf('processing_error')).toBe('processor_error');
  });
});
