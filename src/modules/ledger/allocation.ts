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
 * first on a tie. The parts add up to `total`; each is within one unit of its exact proportion, and no more
 * than its weight while `total` is at most the weights' sum (exactly its weight at the sum). Products are taken
 * in BigInt: amount × weight can pass 2^53.
 */
export function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (!Number.isSafeInteger(total) || total < 0 || weights.some((weight) => !Number.isSafeInteger(weight) || weight < 0)) {
    throw new Error(`cannot apportion ${total} over weights ${weights.join()}`);
  }
  if (sum === 0) {
    if (total === 0) return weights.map(() => 0);
    throw new Error(`cannot apportion ${total} over weights that are all zero`);
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
 * The parties of a payment's amount, in the order rounding favours on a tie: the payment's merchant (what the
 * fee and splits leave, and the surcharge, which is always its own), the fee's platform, each split as given.
 * Amounts are the parties' parts of the amount (the surcharge aside); a party with nothing is left out, but the
 * payment's merchant stays first whenever it has a surcharge to hold.
 */
export function parties(terms: PaymentTerms): Share[] {
  const splitTotal = terms.splits.reduce((sum, split) => sum + split.amount, 0);
  const own = terms.amount - terms.applicationFeeAmount - splitTotal;
  const all: Share[] = [
    { merchantId: terms.merchantId, role: 'merchant', amount: own },
    { merchantId: terms.feeMerchantId, role: 'application_fee', amount: terms.applicationFeeAmount },
    ...terms.splits.map((split) => ({ merchantId: split.merchantId, role: 'split' as const, amount: split.amount })),
  ];
  return all.filter((share, index) => share.amount > 0 || (index === 0 && terms.surchargeAmount > 0));
}

/**
 * `total` shared among `shares` (their amounts the weights of the amount part), the amount part first and the
 * surcharge last: up to `amountPart` in proportion, then up to `surchargePart` to the payment's merchant (the
 * first share), and anything beyond both (a dispute on top of refunds) in proportion again.
 */
function sharesOf(shares: readonly Share[], total: number, amountPart: number, surchargePart: number): Share[] {
  const inAmount = Math.min(total, amountPart);
  const inSurcharge = Math.min(total - inAmount, surchargePart);
  const amounts = apportion(
    inAmount + (total - inAmount - inSurcharge),
    shares.map((share) => share.amount),
  );
  return shares.map((share, index) => ({ ...share, amount: amounts[index]! + (index === 0 && share.role === 'merchant' ? inSurcharge : 0) }));
}

/** What each party holds of `captured`: the amount's shares of what was captured of the amount, then the surcharge. */
export function capturedShares(terms: PaymentTerms, captured: number): Share[] {
  return sharesOf(parties(terms), captured, terms.amount, terms.surchargeAmount);
}

/**
 * What moving the amount captured from `before` to `after` credits each party (a first capture; or a capture
 * undone, which takes back what it credited).
 */
export function captureStep(terms: PaymentTerms, before: number, after: number): Share[] {
  const was = capturedShares(terms, before);
  return capturedShares(terms, after).map((share, index) => ({ ...share, amount: share.amount - was[index]!.amount }));
}

/**
 * What each party should have given back once `total` of `captured` is taken back (refunds held and disputes'
 * withdrawals, together): the captured amount's shares first, in proportion, then the surcharge from the
 * payment's merchant, as refunds return a surcharge last.
 */
export function takenBackShares(terms: PaymentTerms, captured: number, total: number): Share[] {
  const held = capturedShares(terms, captured);
  const amountPart = Math.min(captured, terms.amount);
  const amountShares = held.map((share, index) => ({
    ...share,
    amount: share.amount - (index === 0 && share.role === 'merchant' ? captured - amountPart : 0),
  }));
  return sharesOf(amountShares, total, amountPart, captured - amountPart);
}

/**
 * What each party gives back (positive) or is given back (negative) when the total taken back moves to `total`,
 * given what each has given back so far (`given`, in the parties' order). Each moves toward its share of the
 * new total (takenBackShares) but only in the step's direction: a refund never credits anyone, a refund given
 * back never debits anyone. A party already past its share keeps it, and the units that leaves over are
 * taken from the last parties in order, so the step adds up exactly; the next step evens them out. Once all
 * that was captured is taken back, every party has given back exactly its captured share.
 */
export function takeBackStep(terms: PaymentTerms, captured: number, given: readonly number[], total: number): Share[] {
  const target = takenBackShares(terms, captured, total);
  const step = total - given.reduce((a, b) => a + b, 0);
  const direction = step >= 0 ? 1 : -1;
  const moves = target.map((share, index) => Math.max(0, direction * (share.amount - given[index]!)));
  let surplus = moves.reduce((a, b) => a + b, 0) - Math.abs(step);
  for (let index = moves.length - 1; surplus > 0 && index >= 0; index -= 1) {
    const cut = Math.min(moves[index]!, surplus);
    moves[index]! -= cut;
    surplus -= cut;
  }
  return target.map((share, index) => ({ ...share, amount: direction * moves[index]! }));
}
