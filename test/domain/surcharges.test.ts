// Surcharge arithmetic and rule validation (src/modules/payments/surcharges.ts).
import { describe, expect, it } from 'vitest';
import { surchargeFor, surchargeRulesProblem, type SurchargeRule } from '../../src/modules/payments/surcharges.ts';
import { prng } from '../support/prng.ts';

const rule = (fixedAmount: number, percentBps: number): SurchargeRule => ({ paymentMethodType: 'card', fixedAmount, percentBps });

describe('surchargeFor', () => {
  it.each([
    [1000, rule(30, 0), 30],
    [1000, rule(0, 250), 25],
    [1000, rule(30, 250), 55],
    // Half up: 1 % of 50 is 0.5 → 1; of 49 is 0.49 → 0.
    [50, rule(0, 100), 1],
    [49, rule(0, 100), 0],
    [99_999_999, rule(1_000_000, 2_000), 1_000_000 + 20_000_000],
  ])('%i with %j → %i', (amount, surcharge, expected) => {
    expect(surchargeFor(amount, 'card', [surcharge])).toBe(expected);
  });

  it('is 0 for a method type no rule names', () => {
    expect(surchargeFor(1000, 'bank_debit', [rule(30, 250)])).toBe(0);
    expect(surchargeFor(1000, 'card', [])).toBe(0);
  });

  it('equals amount × bps / 10000 rounded half up, in integers (random amounts and rates)', () => {
    const random = prng(5);
    for (let run = 0; run < 10_000; run += 1) {
      const amount = 1 + Math.floor(random() * 99_999_999);
      const bps = Math.floor(random() * 2001);
      const exact = (amount * bps) / 10_000;
      const expected = exact - Math.floor(exact) >= 0.5 - 1e-9 ? Math.ceil(exact) : Math.floor(exact);
      expect(surchargeFor(amount, 'card', [rule(0, bps)])).toBe(expected);
    }
  });
});

describe('surchargeRulesProblem', () => {
  it.each([
    [[rule(30, 250), { ...rule(0, 100), paymentMethodType: 'wallet' as const }], null],
    [[rule(30, 0), rule(0, 100)], { field: 'surcharges.1.paymentMethodType', rule: 'names a payment method type a second time' }],
    [[rule(-1, 0)], { field: 'surcharges.0.fixedAmount', rule: 'must be a whole number of minor units from 0 to 1000000' }],
    [[rule(1_000_001, 0)], { field: 'surcharges.0.fixedAmount', rule: 'must be a whole number of minor units from 0 to 1000000' }],
    [[rule(1.5, 0)], { field: 'surcharges.0.fixedAmount', rule: 'must be a whole number of minor units from 0 to 1000000' }],
    [[rule(0, 2_001)], { field: 'surcharges.0.percentBps', rule: 'must be whole basis points from 0 to 2000 (20 %)' }],
    [[rule(0, -5)], { field: 'surcharges.0.percentBps', rule: 'must be whole basis points from 0 to 2000 (20 %)' }],
    [[rule(0, 0)], { field: 'surcharges.0', rule: 'must charge something (a fixed amount, a percentage, or both)' }],
  ])('%j → %j', (rules, expected) => {
    expect(surchargeRulesProblem(rules)).toEqual(expected);
  });
});
