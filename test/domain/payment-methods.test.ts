// The seed's "flow variation by payment method" table, as the code holds it.
import { describe, expect, it } from 'vitest';
import { PAYMENT_METHOD_GROUPS, PAYMENT_METHOD_TYPES, paymentMethodGroup, supportsManualCapture } from '../../src/modules/payments/methods.ts';

// The seed, letter for letter: group, customer action, finalization.
const SEED_TABLE = [
  ['cards without 3DS', 'before confirm, in the SDK', 'immediate'],
  ['bank debits', 'before confirm, in the SDK', 'later'],
  ['wallets, buy-now-pay-later', 'before confirm, via a third-party redirect or SDK session token', 'immediate'],
  ['cards with 3DS', 'after confirm, via redirect', 'immediate'],
  ['bank redirects', 'after confirm, via redirect', 'immediate'],
  ['bank transfers, crypto wallets', 'after confirm, via redirect (show transfer instructions)', 'later'],
];

describe('PAYMENT_METHOD_GROUPS', () => {
  it('is the seed table, row for row', () => {
    expect(PAYMENT_METHOD_GROUPS.map((row) => [row.group, row.customerAction, row.finalization])).toEqual(SEED_TABLE);
  });

  it.each(PAYMENT_METHOD_TYPES.flatMap((type) => [false, true].map((threeDs) => ({ type, threeDs }))))(
    '$type (3DS $threeDs) follows exactly one row',
    ({ type, threeDs }) => {
      const rows = PAYMENT_METHOD_GROUPS.filter((row) => row.types.includes(type) && (row.threeDs === undefined || row.threeDs === threeDs));
      expect(rows).toHaveLength(1);
      expect(paymentMethodGroup(type, threeDs)).toBe(rows[0]);
    },
  );

  it('cards follow the 3DS row only with 3DS', () => {
    expect(paymentMethodGroup('card', true).group).toBe('cards with 3DS');
    expect(paymentMethodGroup('card', false).group).toBe('cards without 3DS');
  });

  it.each([
    ['card', true],
    ['wallet', true],
    ['pay_later', true],
    ['bank_redirect', true],
    ['bank_debit', false],
    ['bank_transfer', false],
    ['crypto', false],
  ] as const)('%s supports manual capture: %s', (type, expected) => {
    expect(supportsManualCapture(type)).toBe(expected);
  });
});
