// The ledger's pure rounding (src/modules/ledger/allocation.ts): largest-remainder apportionment, a payment's
// parties, and the take-back steps of partial refunds and disputes (and their give-backs), over generated terms
// and sequences, and table-driven examples with exact numbers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apportion, capturedShares, captureStep, parties, takeBackStep, takenBackShares, type PaymentTerms } from '../../src/modules/ledger/allocation.ts';

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
    // Small amounts as often as large: rounding (and Hamilton's paradoxes) bite there.
    amount: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 1_000_000 })),
    feePart: fc.double({ min: 0, max: 1, noNaN: true }),
    splitWeights: fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 0, maxLength: 5 }),
    surchargeAmount: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 10_000 })),
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

/** A captured amount: usually all of the payment, sometimes part of it (a partial capture takes the amount first). */
const capturedArb = (terms: PaymentTerms) => {
  const full = terms.amount + terms.surchargeAmount;
  return fc.oneof(fc.constant(full), fc.integer({ min: 1, max: full }));
};

/** A take-back (a refund or a dispute's withdrawal; small ones make rounding bite), or an earlier one given back. */
type Operation = { giveBack: false; amount: number } | { giveBack: true; pick: number };
const operationArb: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ giveBack: fc.constant(false as const), amount: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 1_010_000 })) }),
  fc.record({ giveBack: fc.constant(true as const), pick: fc.nat() }),
);
const sequenceArb = termsArb.chain((terms) => fc.tuple(fc.constant(terms), capturedArb(terms), fc.array(operationArb, { minLength: 1, maxLength: 15 })));

/** −0 (a party a give-back leaves alone) reads as 0. */
const amountsOf = (shares: readonly { amount: number }[]) => shares.map((share) => share.amount + 0);

/**
 * Runs the operations in order (take-backs capped at what is left, a give-back returning an earlier take-back
 * that is still held, as a failed refund or a won dispute does), then, if `finish`, takes back all that is left;
 * checks every step and returns what each party has given back.
 */
function takeBackAll(terms: PaymentTerms, captured: number, operations: readonly Operation[], finish: boolean) {
  const held = capturedShares(terms, captured);
  // The amount part of what was captured, and each party's share of it: the weights of the exact proportions.
  const amountPart = Math.min(captured, terms.amount);
  const weights = held.map((share, index) => share.amount - (index === 0 && share.role === 'merchant' ? captured - amountPart : 0));
  const given = held.map(() => 0);
  const open: number[] = [];
  let total = 0;
  let onlyAmount = true;
  const steps: Operation[] = finish ? [...operations, { giveBack: false, amount: captured }] : [...operations];
  for (const operation of steps) {
    let amount: number;
    if (operation.giveBack) {
      if (open.length === 0) continue;
      amount = -open.splice(operation.pick % open.length, 1)[0]!;
    } else {
      amount = Math.min(operation.amount, captured - total);
      if (amount === 0) continue;
      open.push(amount);
    }
    total += amount;
    if (total > amountPart) onlyAmount = false;
    const step = takeBackStep(terms, captured, given, total);
    expect(step.map((share) => [share.merchantId, share.role])).toEqual(held.map((share) => [share.merchantId, share.role]));
    expect(sum(amountsOf(step))).toBe(amount);
    const target = amountsOf(takenBackShares(terms, captured, total));
    step.forEach((share, index) => {
      const was = given[index]!;
      given[index]! += share.amount;
      const now = given[index]!;
      // A take-back never credits anyone, a give-back never debits anyone, and no party moves past its target.
      expect(share.amount * Math.sign(amount)).toBeGreaterThanOrEqual(0);
      expect(Math.min(was, target[index]!) <= now && now <= Math.max(was, target[index]!)).toBe(true);
      // Within one unit of its target (at most one unit left behind or kept ahead, by the direction clamp or
      // the cut that evens it out), and the target within one unit of the exact proportion, so less than two
      // units from it: exact = min(total, amountPart) × weight / amountPart, plus what of the surcharge is
      // taken back for the payment's merchant. In integers, times amountPart.
      expect(Math.abs(now - target[index]!)).toBeLessThanOrEqual(1);
      const inAmount = Math.min(total, amountPart);
      const exact = inAmount * weights[index]! + (index === 0 && share.role === 'merchant' ? (total - inAmount) * amountPart : 0);
      expect(Math.abs(now * amountPart - exact)).toBeLessThan(2 * amountPart);
      // Never more than it holds, never less than nothing.
      expect(now).toBeGreaterThanOrEqual(0);
      expect(now).toBeLessThanOrEqual(held[index]!.amount);
    });
    // While no more than the amount part was ever taken back, the surcharge stays with the payment's merchant.
    if (onlyAmount && held[0]!.role === 'merchant') expect(given[0]).toBeLessThanOrEqual(weights[0]!);
  }
  return { held, given, total };
}

describe('a payment’s parties and shares', () => {
  it('parties share the amount: the merchant keeps what the fee and splits leave, first; no zero share but a surcharge holder', () => {
    fc.assert(
      fc.property(termsArb, (terms) => {
        const all = parties(terms);
        expect(sum(amountsOf(all))).toBe(terms.amount);
        expect(all.every((share, index) => share.amount > 0 || (index === 0 && share.role === 'merchant' && terms.surchargeAmount > 0))).toBe(true);
        expect(all.find((share) => share.role === 'application_fee')?.amount ?? 0).toBe(terms.applicationFeeAmount);
        expect(all.filter((share) => share.role === 'split').map((share) => share.amount)).toEqual(terms.splits.map((split) => split.amount));
        const own = terms.amount - terms.applicationFeeAmount - sum(terms.splits.map((split) => split.amount));
        if (own > 0 || terms.surchargeAmount > 0) expect(all[0]).toEqual({ merchantId: terms.merchantId, role: 'merchant', amount: own });
        // All captured: the parties' shares, and the surcharge to the payment's merchant.
        const captured = capturedShares(terms, terms.amount + terms.surchargeAmount);
        expect(amountsOf(captured)).toEqual(all.map((share, index) => share.amount + (index === 0 ? terms.surchargeAmount : 0)));
      }),
      { numRuns: 300 },
    );
  });

  it('a full capture credits every share exactly; undoing it takes back exactly as much; a partial one takes the amount first', () => {
    fc.assert(
      fc.property(
        termsArb.chain((terms) => fc.tuple(fc.constant(terms), capturedArb(terms))),
        ([terms, partial]) => {
          const full = terms.amount + terms.surchargeAmount;
          const credited = captureStep(terms, 0, full);
          expect(credited).toEqual(capturedShares(terms, full));
          expect(captureStep(terms, full, 0)).toEqual(credited.map((share) => ({ ...share, amount: -share.amount })));
          // A partial capture and the rest add up to the full capture's shares.
          const first = amountsOf(captureStep(terms, 0, partial));
          const rest = amountsOf(captureStep(terms, partial, full));
          expect(first.map((amount, index) => amount + rest[index]!)).toEqual(amountsOf(credited));
          expect(sum(first)).toBe(partial);
          // Up to the amount, the parties in proportion (apportion); the surcharge only past it.
          const amountShares = amountsOf(parties(terms));
          const surcharge = Math.max(0, partial - terms.amount);
          expect(first).toEqual(apportion(partial - surcharge, amountShares).map((amount, index) => amount + (index === 0 ? surcharge : 0)));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('taking back and giving back', () => {
  it('steps add up exactly, never credit on a take-back nor debit on a give-back, stay within bounds, and a full take-back returns every share exactly', () => {
    fc.assert(
      fc.property(sequenceArb, ([terms, captured, operations]) => {
        const { held, given, total } = takeBackAll(terms, captured, operations, true);
        expect(total).toBe(captured);
        expect(given).toEqual(amountsOf(held));
      }),
      { numRuns: 700 },
    );
  });

  it('one unit at a time up to all captured and back to nothing: each step one party, one unit, in the step’s direction', () => {
    // Walks every total of a small payment, where Hamilton's paradox (a party's share shrinking as the total
    // grows) shows: the direction clamp keeps such a party where it is.
    fc.assert(
      fc.property(
        termsArb.filter((terms) => terms.amount + terms.surchargeAmount <= 40),
        (terms) => {
          const captured = terms.amount + terms.surchargeAmount;
          const up = Array.from({ length: captured }, (): Operation => ({ giveBack: false, amount: 1 }));
          const down = Array.from({ length: captured }, (): Operation => ({ giveBack: true, pick: 0 }));
          const { given, total } = takeBackAll(terms, captured, [...up, ...down], false);
          expect(total).toBe(0);
          expect(given.every((part) => part === 0)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a refund that fails gives back exactly what it took when every party was on its share before; in any case each ends within a unit of its share', () => {
    fc.assert(
      fc.property(sequenceArb, fc.nat(), fc.nat(), ([terms, captured, operations], at, size) => {
        // On its share: given is takenBackShares of the total (after a full take-back and a give-back of it all,
        // or before any), so the refund's step and its give-back are mirror images.
        const before = at % captured;
        const amount = 1 + (size % (captured - before));
        const onShare = amountsOf(takenBackShares(terms, captured, before));
        const there = amountsOf(takeBackStep(terms, captured, onShare, before + amount));
        const back = amountsOf(
          takeBackStep(
            terms,
            captured,
            onShare.map((given, index) => given + there[index]!),
            before,
          ),
        );
        expect(back).toEqual(there.map((part) => 0 - part));
        // After any sequence: a refund and its give-back leave each party within a unit of its share.
        const { given, total } = takeBackAll(terms, captured, operations, false);
        if (total === captured) return;
        const refund = 1 + (size % (captured - total));
        const step = amountsOf(takeBackStep(terms, captured, given, total + refund));
        const after = given.map((part, index) => part + step[index]!);
        const returned = amountsOf(takeBackStep(terms, captured, after, total));
        expect(sum(returned)).toBe(-refund);
        const target = amountsOf(takenBackShares(terms, captured, total));
        after.forEach((part, index) => {
          const now = part + returned[index]!;
          expect(Math.abs(now - target[index]!)).toBeLessThanOrEqual(1);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('returns the surcharge last: up to the amount it stays with the merchant, beyond it only the merchant gives back', () => {
    fc.assert(
      fc.property(
        termsArb.filter((terms) => terms.surchargeAmount > 0),
        fc.array(fc.integer({ min: 1, max: 1_010_000 }), { minLength: 1, maxLength: 6 }),
        (terms, refunds) => {
          const captured = terms.amount + terms.surchargeAmount;
          const own = parties(terms)[0]!.amount;
          // Refunds up to the amount: the merchant never gives back more than its part of the amount.
          let left = terms.amount;
          const upToAmount = refunds.map((refund) => {
            const amount = Math.min(refund, left);
            left -= amount;
            return { giveBack: false as const, amount };
          });
          expect(takeBackAll(terms, captured, upToAmount, false).given[0]).toBeLessThanOrEqual(own);
          // From the amount all taken back, every refund is the merchant's alone.
          let given = amountsOf(takenBackShares(terms, captured, terms.amount));
          expect(given).toEqual(amountsOf(parties(terms)));
          let total = terms.amount;
          for (const refund of refunds) {
            const amount = Math.min(refund, captured - total);
            if (amount === 0) break;
            total += amount;
            const step = amountsOf(takeBackStep(terms, captured, given, total));
            expect(step).toEqual(given.map((_, index) => (index === 0 ? amount : 0)));
            given = given.map((part, index) => part + step[index]!);
          }
          expect(given[0]).toBe(own + total - terms.amount);
        },
      ),
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

  /** Runs the take-backs (positive) and give-backs (negative) from nothing taken back, returning each step's amounts. */
  function steps(terms: PaymentTerms, captured: number, amounts: readonly number[]) {
    let given = capturedShares(terms, captured).map(() => 0);
    let total = 0;
    return amounts.map((amount) => {
      total += amount;
      const step = amountsOf(takeBackStep(terms, captured, given, total));
      given = given.map((part, index) => part + step[index]!);
      return step;
    });
  }

  it('1000 with fee 100, split 600/300: the payment’s merchant keeps nothing, three refunds 333/333/334 (docs/ledger.md)', () => {
    expect(parties(marketplace)).toEqual([
      { merchantId: 'mer_platform', role: 'application_fee', amount: 100 },
      { merchantId: 'mer_a', role: 'split', amount: 600 },
      { merchantId: 'mer_b', role: 'split', amount: 300 },
    ]);
    // At 333 exact 33.3/199.8/99.9: two units left, to the largest remainders (b, then a): 33/200/100. At 666
    // exact 66.6/399.6/199.8: b, then the tie of .6 to the earlier (the fee): 67/399/200, a step of 34/199/100.
    expect(steps(marketplace, 1000, [333, 333, 334])).toEqual([
      [33, 200, 100],
      [34, 199, 100],
      [33, 201, 100],
    ]);
    // The same in cents, as the docs tell it: 1,000.00 with a 100.00 fee and 600.00/300.00 splits.
    const inCents: PaymentTerms = {
      ...marketplace,
      amount: 100_000,
      applicationFeeAmount: 10_000,
      splits: [
        { merchantId: 'mer_a', amount: 60_000 },
        { merchantId: 'mer_b', amount: 30_000 },
      ],
    };
    expect(steps(inCents, 100_000, [33_333, 33_333, 33_334])).toEqual([
      [3333, 20_000, 10_000],
      [3334, 19_999, 10_000],
      [3333, 20_001, 10_000],
    ]);
  });

  it('1000 with fee 100 and no splits: the fee and 900 to the merchant; a refund of 1 takes it from the merchant', () => {
    const terms: PaymentTerms = { ...marketplace, splits: [] };
    expect(parties(terms)).toEqual([
      { merchantId: 'mer_seller', role: 'merchant', amount: 900 },
      { merchantId: 'mer_platform', role: 'application_fee', amount: 100 },
    ]);
    expect(steps(terms, 1000, [1])).toEqual([[1, 0]]);
    expect(steps(terms, 1000, [500])).toEqual([[450, 50]]);
  });

  it('a surcharge stays with the payment’s merchant and is returned last', () => {
    const terms: PaymentTerms = { ...marketplace, surchargeAmount: 30 };
    // The merchant keeps nothing of the amount but holds the surcharge, so it stays, first.
    expect(parties(terms).map((share) => [share.role, share.amount])).toEqual([
      ['merchant', 0],
      ['application_fee', 100],
      ['split', 600],
      ['split', 300],
    ]);
    expect(amountsOf(capturedShares(terms, 1030))).toEqual([30, 100, 600, 300]);
    // 515 of 1030 comes from the amount: exact 51.5/309/154.5, the unit left to the earlier tie (the fee). The
    // other 515 returns the rest of the amount and then the surcharge.
    expect(steps(terms, 1030, [515, 515])).toEqual([
      [0, 52, 309, 154],
      [30, 48, 291, 146],
    ]);
    // The amount refunded first: the surcharge is returned only past it, and only by the merchant.
    expect(steps(terms, 1030, [1000, 20, 10])).toEqual([
      [0, 100, 600, 300],
      [20, 0, 0, 0],
      [10, 0, 0, 0],
    ]);
    // A capture short of the amount and surcharge takes the amount first: 1015 holds half the surcharge.
    expect(amountsOf(capturedShares(terms, 1000))).toEqual([0, 100, 600, 300]);
    expect(amountsOf(captureStep(terms, 1000, 1015))).toEqual([15, 0, 0, 0]);
  });

  it('a partial capture credits the shares of what it took, and a refund of it all returns them exactly', () => {
    expect(amountsOf(captureStep(marketplace, 0, 500))).toEqual([50, 300, 150]);
    expect(amountsOf(captureStep(marketplace, 0, 1))).toEqual([0, 1, 0]);
    expect(steps(marketplace, 500, [500])).toEqual([[50, 300, 150]]);
    // 7 of 500: exact 0.7/4.2/2.1, the unit left to the largest remainder (the fee).
    expect(steps(marketplace, 500, [7])).toEqual([[1, 4, 2]]);
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
    expect(steps(even, 3, [1, 1, 1])).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ]);
  });

  it('a refund whose rounding would credit a party takes nothing from it instead, and its failure gives back what it took', () => {
    // 7: fee 1, splits 3/3. A refund of 3: exact 0.43/1.29/1.29, the unit left to the fee: 1/1/1. At 4 the
    // shares are 0/2/2 (exact 0.57/1.71/1.71): the fee is past its share, but a refund never credits it, so it
    // keeps its 1 and the unit this leaves over is cut from the last party: 0/1/0, not −1/1/1.
    const terms: PaymentTerms = {
      merchantId: 'mer_seller',
      amount: 7,
      surchargeAmount: 0,
      applicationFeeAmount: 1,
      feeMerchantId: 'mer_platform',
      splits: [
        { merchantId: 'mer_a', amount: 3 },
        { merchantId: 'mer_b', amount: 3 },
      ],
    };
    expect(amountsOf(takenBackShares(terms, 7, 4))).toEqual([0, 2, 2]);
    // The refund of 1 fails and is given back (back to 1/1/1, on the shares of 3); the rest is refunded.
    expect(steps(terms, 7, [3, 1, -1, 4])).toEqual([
      [1, 1, 1],
      [0, 1, 0],
      [0, -1, 0],
      [0, 2, 2],
    ]);
    // Refunded instead of failing, the next refund evens it out: at 5 (exact 0.71/2.14/2.14) 1/2/2.
    expect(steps(terms, 7, [3, 1, 1, 2])).toEqual([
      [1, 1, 1],
      [0, 1, 0],
      [0, 0, 1],
      [0, 1, 1],
    ]);
  });
});
