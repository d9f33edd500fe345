// Medusa hands providers amounts as BigNumber values in major units (10.5 USD); our API takes integers in
// the currency's minor unit (1050), by the ISO 4217 exponent the service validates with (docs/payments.md,
// "Money"). The table is the service's own (src/kernel/money.ts, import-free): the build bundles it into the
// package (docs/medusa.md, "Amounts"), so the provider and the service can never disagree on an exponent.
import type { BigNumberInput } from '@medusajs/framework/types';
import { MathBN, MedusaError } from '@medusajs/framework/utils';
import { minorUnitExponent } from '../../../src/kernel/money.ts';

function exponentOf(currencyCode: string, field: string): number {
  try {
    // Medusa keeps currency codes lowercase ("usd"); the ISO table is uppercase.
    return minorUnitExponent(currencyCode.toUpperCase());
  } catch {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, `${field}: ${currencyCode} is not an ISO 4217 currency the payments API accepts`);
  }
}

/**
 * `amount` (major units) in `currencyCode`'s minor units, computed in decimal (no binary floating point).
 * A fraction below the minor unit (tax arithmetic leaves 10.004999) is rounded half up, as Medusa itself
 * rounds amounts to a currency's precision when it compares them.
 */
export function toMinorUnits(amount: BigNumberInput, currencyCode: string, field = 'amount'): number {
  const exponent = exponentOf(currencyCode, 'currency_code');
  const minor = MathBN.convert(MathBN.convert(amount).shiftedBy(exponent), 0);
  if (!minor.isFinite() || minor.isNegative() || !Number.isSafeInteger(minor.toNumber())) {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, `${field}: must be a non-negative amount, got ${MathBN.convert(amount).toString()}`);
  }
  return minor.toNumber();
}

/** `minor` units of `currencyCode` as Medusa's major-unit number (1050 USD is 10.5, 1050 KWD is 1.05, 1050 JPY is 1050). */
export function fromMinorUnits(minor: number, currencyCode: string): number {
  return MathBN.convert(minor).shiftedBy(-exponentOf(currencyCode, 'currency')).toNumber();
}
