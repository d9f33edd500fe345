// How a payment's money is shared among the merchants it is for, and how refunds and disputes take the shares
// back (docs/ledger.md, "Rounding"). Pure: amounts are integers in the currency's minor unit, and every split
// adds up to exactly what it splits, so no cent is ever lost or made.

export type ShareRole = 'merchant' | 'application_fee' | 'split';

export interface Share {
  merchantId: string;
  role: ShareRole;
  amount: number;
}

/** What a payment says of whose its money is: set at createPayment, never changed. */
export interface PaymentTerms {
  merchantId: string;
  amount: number;
  surchargeAmount: number;
  applicationFeeAmount: number;
  /** Who keeps the fee: the platform that created the payment (for a connected merchant, or its own). */
  feeMerchantId: string;
  splits: readonly { merchantId: string; amount: number }[];
}

/**
 * `total` split in proportion to `weights` by largest remainder (Hamilton): each part is its exact proportion
 * rounded down, and the units left go one each to the parts with the largest remainders, the earlier part
 * first on a tie. The parts add up to `total`; each is within one unit of its exact proportion; at
 * `total` = the weights' sum every part is its weight exactly. Products are taken in BigInt: amount × weight
 * can pass 2^53.
 */
export function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (!Number.isSafeInteger(total) || total < 0 || sum <= 0 || weights.some((weight) => !Number.isSafeInteger(weight) || weight < 0)) {
    throw new Error(`cannot apportion ${total} over weights ${weights.join()}`);
  }
  const divisor = BigInt(sum);
  const products = weights.map((weight) => BigInt(total) * BigInt(weight));
  const parts = products.map((product) => Number(product / divisor));
  let left = total - parts.reduce((a, b) => a + b, 0);
  const byRemainder = products.map((product, index) => ({ remainder: product % divisor, index }));
  byRemainder.sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of byRemainder) {
    if (left === 0) break;
    parts[index]! += 1;
    left -= 1;
  }
  return parts;
}

/**
 * The shares of the payment's whole amount (its surcharge included): the fee to the platform, each split
 * to its merchant, and what is left (the surcharge, or everything less the fee when there are no splits)
 * to the payment's merchant. Zero shares are left out.
 */
export function fullShares(terms: PaymentTerms): Share[] {
  const splitTotal = terms.splits.reduce((sum, split) => sum + split.amount, 0);
  const own = terms.amount + terms.surchargeAmount - terms.applicationFeeAmount - splitTotal;
  const shares: Share[] = [
    { merchantId: terms.merchantId, role: 'merchant', amount: own },
    { merchantId: terms.feeMerchantId, role: 'application_fee', amount: terms.applicationFeeAmount },
    ...terms.splits.map((split) => ({ merchantId: split.merchantId, role: 'split' as const, amount: split.amount })),
  ];
  return shares.filter((share) => share.amount > 0);
}

/** `shares` scaled to `total`: the same parties, their amounts apportioned (apportion) over the shares'. */
export function scaled(shares: readonly Share[], total: number): Share[] {
  const amounts = apportion(
    total,
    shares.map((share) => share.amount),
  );
  return shares.map((share, index) => ({ ...share, amount: amounts[index]! }));
}

/** What each party's balance changes by: `after` less `before`, part by part (the same parties in the same order). */
export function difference(after: readonly Share[], before: readonly Share[]): Share[] {
  return after.map((share, index) => ({ ...share, amount: share.amount - before[index]!.amount }));
}

/**
 * What moving the amount captured from `before` to `after` credits each party: the difference of the whole
 * amount's shares scaled to each. A first capture credits the shares of what it took; a capture the processor
 * reverses, or a void after capture, takes them back.
 */
export function captureStep(terms: PaymentTerms, before: number, after: number): Share[] {
  const whole = fullShares(terms);
  return difference(scaled(whole, after), scaled(whole, before));
}

/**
 * What moving the total taken back from a payment (refunds held and disputes' withdrawals, together) from
 * `before` to `after` debits each party (positive: taken from it), out of the shares of `captured`. The
 * shares of the total taken back are apportioned afresh at each step and the step is their difference, so
 * a party is never more than one unit from its exact proportion, and once all that was captured is taken
 * back each party has given back exactly its share: the fee and every split reversed exactly.
 */
export function reversalStep(terms: PaymentTerms, captured: number, before: number, after: number): Share[] {
  const shares = scaled(fullShares(terms), captured);
  return difference(scaled(shares, after), scaled(shares, before));
}
