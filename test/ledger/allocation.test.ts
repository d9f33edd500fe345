// The ledger's pure rounding (src/modules/ledger/allocation.ts): largest-remainder apportionment, a payment's
// shares, and the reversal steps of partial refunds and disputes, over generated terms and refund sequences,
// and table-driven examples with exact numbers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apportion, captureStep, fullShares, reversalStep, type PaymentTerms } from '../../src/modules/ledger/allocation.ts';

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

const weightsArb = fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 8 }).filter((weights) => sum(weights) > 0);

describe('apportion', () => {
  it('adds up to exactly the total, each part within one unit of its exact proportion', () => {
    fc.assert(
      fc.property(weightsArb, fc.integer({ min: 0, max: 10_000_000 }), (weights, total) => {
        const parts = apportion(total, weights);
        expect(parts).toHaveLength(weights.length);
        expect(sum(parts)).toBe(total);
        const whole = sum(weights);
        parts.forEach((part, index) => {
          expect(Number.isInteger(part)).toBe(true);
          // |part − total × weight / whole| < 1, in integers: |part × whole − total × weight| < whole.
          expect(Math.abs(part * whole - total * weights[index]!)).toBeLessThan(whole);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('gives every part its weight when the total is the weights’ sum, and nothing at total 0', () => {
    fc.assert(
      fc.property(weightsArb, (weights) => {
        expect(apportion(sum(weights), weights)).toEqual(weights);
        expect(apportion(0, weights)).toEqual(weights.map(() => 0));
      }),
    );
  });

  it('is exact where amount × weight passes 2^53', () => {
    // (2^52 + 1) × 2^40 is far past 2^53: each half is 2^51 + ½, and the tie goes to the first.
    expect(apportion(2 ** 52 + 1, [2 ** 40, 2 ** 40])).toEqual([2 ** 51 + 1, 2 ** 51]);
    expect(apportion(2 ** 52, [1, 2 ** 40 - 1])).toEqual([2 ** 12, 2 ** 52 - 2 ** 12]);
  });

  it.each([
    // Ties go to the earlier part.
    [1, [1, 1], [1, 0]],
    [2, [1, 1, 1], [1, 1, 0]],
    [5, [1, 1], [3, 2]],
    // The largest remainder wins over the earlier part.
    [10, [1, 2], [3, 7]],
    [100, [1, 1, 1], [34, 33, 33]],
    [333, [100, 600, 300], [33, 200, 100]],
    [333, [300, 600, 100], [100, 200, 33]],
    [7, [0, 3, 4], [0, 3, 4]],
  ])('apportion(%i, %j) = %j', (total, weights, expected) => {
    expect(apportion(total, weights)).toEqual(expected);
  });

  it.each([
    [10, []],
    [10, [0, 0]],
    [-1, [1]],
    [10, [1, -1]],
    [1.5, [1]],
  ])('refuses apportion(%s, %j)', (total, weights) => {
    expect(() => apportion(total, weights)).toThrow(/cannot apportion/);
  });
});

/** Generated terms: a merchant, a platform fee, 0 to 5 splits, a surcharge; splits add up to the amount less the fee. */
const termsArb: fc.Arbitrary<PaymentTerms> = fc
  .record({
    amount: fc.integer({ min: 1, max: 1_000_000 }),
    feePart: fc.double({ min: 0, max: 1, noNaN: true }),
    splitWeights: fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 0, maxLength: 5 }),
    surchargeAmount: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000 })),
  })
  .map(({ amount, feePart, splitWeights: drawn, surchargeAmount }) => {
    const splitWeights = drawn.slice(0, amount);
    let applicationFeeAmount = Math.floor(amount * feePart);
    // Each split needs at least one unit (a zero share is not a split).
    if (amount - applicationFeeAmount < splitWeights.length) applicationFeeAmount = Math.max(0, amount - splitWeights.length);
    const rest = amount - applicationFeeAmount;
    const splitAmounts = splitWeights.length === 0 ? [] : apportion(rest - splitWeights.length, splitWeights).map((part) => part + 1);
    return {
      merchantId: 'mer_payment',
      amount,
      surchargeAmount,
      applicationFeeAmount,
      feeMerchantId: 'mer_platform',
      splits: splitAmounts.map((splitAmount, index) => ({ merchantId: `mer_split_${index}`, amount: splitAmount })),
    };
  });

/** A captured payment and partial refunds (or dispute withdrawals) taking back at most what was captured. */
const reversalsArb = termsArb.chain((terms) => {
  const captured = terms.amount + terms.surchargeAmount;
  return fc.tuple(fc.constant(terms), fc.array(fc.integer({ min: 1, max: captured }), { minLength: 1, maxLength: 10 }));
});

/** Runs the refunds in order (each capped at what is left), checking each step; returns the totals taken from each share. */
function reverseAll(terms: PaymentTerms, refunds: readonly number[], finish: boolean) {
  const captured = terms.amount + terms.surchargeAmount;
  const shares = fullShares(terms);
  const taken = shares.map(() => 0);
  let total = 0;
  const amounts = [...refunds];
  if (finish) amounts.push(captured);
  for (const requested of amounts) {
    const amount = Math.min(requested, captured - total);
    if (amount === 0) continue;
    const step = reversalStep(terms, captured, total, total + amount);
    expect(step.map((share) => [share.merchantId, share.role])).toEqual(shares.map((share) => [share.merchantId, share.role]));
    expect(sum(step.map((share) => share.amount))).toBe(amount);
    total += amount;
    step.forEach((share, index) => {
      expect(share.amount).toBeGreaterThanOrEqual(0);
      taken[index]! += share.amount;
      // Never more than the share, and always within a unit of its exact proportion of the running total.
      expect(taken[index]).toBeLessThanOrEqual(shares[index]!.amount);
      expect(Math.abs(taken[index]! * captured - total * shares[index]!.amount)).toBeLessThan(captured);
    });
  }
  return { shares, taken, total };
}

describe('a payment’s shares and their reversal', () => {
  it('fullShares adds up to amount + surcharge, each party named once, no zero share', () => {
    fc.assert(
      fc.property(termsArb, (terms) => {
        const shares = fullShares(terms);
        expect(sum(shares.map((share) => share.amount))).toBe(terms.amount + terms.surchargeAmount);
        expect(shares.every((share) => share.amount > 0)).toBe(true);
        const fee = shares.find((share) => share.role === 'application_fee');
        expect(fee?.amount ?? 0).toBe(terms.applicationFeeAmount);
        expect(shares.filter((share) => share.role === 'split').map((share) => share.amount)).toEqual(terms.splits.map((split) => split.amount));
      }),
      { numRuns: 300 },
    );
  });

  it('a full capture credits every share exactly; undoing it takes back exactly as much', () => {
    fc.assert(
      fc.property(termsArb, (terms) => {
        const captured = terms.amount + terms.surchargeAmount;
        const credited = captureStep(terms, 0, captured);
        expect(credited).toEqual(fullShares(terms));
        expect(captureStep(terms, captured, 0)).toEqual(credited.map((share) => ({ ...share, amount: -share.amount })));
      }),
    );
  });

  it('partial refunds never take more than a share, add up exactly, and a full reversal returns every share exactly', () => {
    fc.assert(
      fc.property(reversalsArb, ([terms, refunds]) => {
        const { shares, taken, total } = reverseAll(terms, refunds, true);
        expect(total).toBe(terms.amount + terms.surchargeAmount);
        expect(taken).toEqual(shares.map((share) => share.amount));
      }),
      { numRuns: 500 },
    );
  });

  it('a refund that fails gives back exactly what it took (the step back is the step there, negated)', () => {
    fc.assert(
      fc.property(reversalsArb, fc.nat(), ([terms, refunds], pick) => {
        const captured = terms.amount + terms.surchargeAmount;
        const before = Math.min(refunds[0]!, captured - 1);
        const amount = Math.min(refunds[pick % refunds.length]!, captured - before);
        const there = reversalStep(terms, captured, before, before + amount);
        const back = reversalStep(terms, captured, before + amount, before);
        expect(back).toEqual(there.map((share) => ({ ...share, amount: 0 - share.amount })));
      }),
      { numRuns: 300 },
    );
  });
});

describe('worked examples', () => {
  const marketplace: PaymentTerms = {
    merchantId: 'mer_seller',
    amount: 1000,
    surchargeAmount: 0,
    applicationFeeAmount: 100,
    feeMerchantId: 'mer_platform',
    splits: [
      { merchantId: 'mer_a', amount: 600 },
      { merchantId: 'mer_b', amount: 300 },
    ],
  };

  it('1000 with fee 100, split 600/300: the payment’s merchant keeps nothing, three refunds 333/333/334', () => {
    expect(fullShares(marketplace)).toEqual([
      { merchantId: 'mer_platform', role: 'application_fee', amount: 100 },
      { merchantId: 'mer_a', role: 'split', amount: 600 },
      { merchantId: 'mer_b', role: 'split', amount: 300 },
    ]);
    const amounts = (from: number, to: number) => reversalStep(marketplace, 1000, from, to).map((share) => share.amount);
    expect(amounts(0, 333)).toEqual([33, 200, 100]);
    // At 666 the running shares are 67/399/200 (exact 66.6/399.6/199.8: the largest remainder, then the earlier tie).
    expect(amounts(333, 666)).toEqual([34, 199, 100]);
    expect(amounts(666, 1000)).toEqual([33, 201, 100]);
  });

  it('1000 with fee 100 and no splits: the fee and 900 to the merchant; a refund of 1 takes it from the merchant', () => {
    const terms: PaymentTerms = { ...marketplace, splits: [] };
    expect(fullShares(terms)).toEqual([
      { merchantId: 'mer_seller', role: 'merchant', amount: 900 },
      { merchantId: 'mer_platform', role: 'application_fee', amount: 100 },
    ]);
    expect(reversalStep(terms, 1000, 0, 1).map((share) => share.amount)).toEqual([1, 0]);
    expect(reversalStep(terms, 1000, 0, 500).map((share) => share.amount)).toEqual([450, 50]);
  });

  it('a surcharge stays with the payment’s merchant, and is taken back in proportion', () => {
    const terms: PaymentTerms = { ...marketplace, surchargeAmount: 30 };
    expect(fullShares(terms).map((share) => [share.role, share.amount])).toEqual([
      ['merchant', 30],
      ['application_fee', 100],
      ['split', 600],
      ['split', 300],
    ]);
    // 515 of 1030: exact 15, 50, 300, 150.
    expect(reversalStep(terms, 1030, 0, 515).map((share) => share.amount)).toEqual([15, 50, 300, 150]);
    expect(reversalStep(terms, 1030, 515, 1030).map((share) => share.amount)).toEqual([15, 50, 300, 150]);
  });

  it('a partial capture credits the shares of what it took, and a refund of it all returns them exactly', () => {
    expect(captureStep(marketplace, 0, 500).map((share) => share.amount)).toEqual([50, 300, 150]);
    expect(captureStep(marketplace, 0, 1).map((share) => share.amount)).toEqual([0, 1, 0]);
    expect(reversalStep(marketplace, 500, 0, 500).map((share) => share.amount)).toEqual([50, 300, 150]);
    expect(reversalStep(marketplace, 500, 0, 7).map((share) => share.amount)).toEqual([1, 4, 2]);
  });

  it('1 cent over three equal splits goes to the first, then the next', () => {
    const even: PaymentTerms = {
      merchantId: 'mer_seller',
      amount: 3,
      surchargeAmount: 0,
      applicationFeeAmount: 0,
      feeMerchantId: 'mer_platform',
      splits: ['mer_a', 'mer_b', 'mer_c'].map((merchantId) => ({ merchantId, amount: 1 })),
    };
    expect(reversalStep(even, 3, 0, 1).map((share) => share.amount)).toEqual([1, 0, 0]);
    expect(reversalStep(even, 3, 1, 2).map((share) => share.amount)).toEqual([0, 1, 0]);
    expect(reversalStep(even, 3, 2, 3).map((share) => share.amount)).toEqual([0, 0, 1]);
  });
});
