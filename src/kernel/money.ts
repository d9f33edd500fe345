// Amounts are integers in the currency's minor unit (cents for USD, yen for JPY, fils for KWD) from the API to
// the processor, so no floating-point rounding can creep in; text is converted to and from them on digit strings.

/**
 * Every active currency of ISO 4217 list one (the SIX list published 2026-01-01) and its minor-unit exponent
 * as that list gives it (which differs from some processors' conventions, e.g. ISK and UGX). Entries that are
 * not money are left out: precious metals (XAU, XAG, XPT, XPD), units of account (XDR, XSU, XUA, XAD, XBA..XBD),
 * and the testing and no-currency codes (XTS, XXX).
 */
export const CURRENCY_EXPONENTS: Readonly<Record<string, number>> = Object.freeze({
  AED: 2,
  AFN: 2,
  ALL: 2,
  AMD: 2,
  AOA: 2,
  ARS: 2,
  AUD: 2,
  AWG: 2,
  AZN: 2,
  BAM: 2,
  BBD: 2,
  BDT: 2,
  BHD: 3,
  BIF: 0,
  BMD: 2,
  BND: 2,
  BOB: 2,
  BOV: 2,
  BRL: 2,
  BSD: 2,
  BTN: 2,
  BWP: 2,
  BYN: 2,
  BZD: 2,
  CAD: 2,
  CDF: 2,
  CHE: 2,
  CHF: 2,
  CHW: 2,
  CLF: 4,
  CLP: 0,
  CNY: 2,
  COP: 2,
  COU: 2,
  CRC: 2,
  CUP: 2,
  CVE: 2,
  CZK: 2,
  DJF: 0,
  DKK: 2,
  DOP: 2,
  DZD: 2,
  EGP: 2,
  ERN: 2,
  ETB: 2,
  EUR: 2,
  FJD: 2,
  FKP: 2,
  GBP: 2,
  GEL: 2,
  GHS: 2,
  GIP: 2,
  GMD: 2,
  GNF: 0,
  GTQ: 2,
  GYD: 2,
  HKD: 2,
  HNL: 2,
  HTG: 2,
  HUF: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  IQD: 3,
  IRR: 2,
  ISK: 0,
  JMD: 2,
  JOD: 3,
  JPY: 0,
  KES: 2,
  KGS: 2,
  KHR: 2,
  KMF: 0,
  KPW: 2,
  KRW: 0,
  KWD: 3,
  KYD: 2,
  KZT: 2,
  LAK: 2,
  LBP: 2,
  LKR: 2,
  LRD: 2,
  LSL: 2,
  LYD: 3,
  MAD: 2,
  MDL: 2,
  MGA: 2,
  MKD: 2,
  MMK: 2,
  MNT: 2,
  MOP: 2,
  MRU: 2,
  MUR: 2,
  MVR: 2,
  MWK: 2,
  MXN: 2,
  MXV: 2,
  MYR: 2,
  MZN: 2,
  NAD: 2,
  NGN: 2,
  NIO: 2,
  NOK: 2,
  NPR: 2,
  NZD: 2,
  OMR: 3,
  PAB: 2,
  PEN: 2,
  PGK: 2,
  PHP: 2,
  PKR: 2,
  PLN: 2,
  PYG: 0,
  QAR: 2,
  RON: 2,
  RSD: 2,
  RUB: 2,
  RWF: 0,
  SAR: 2,
  SBD: 2,
  SCR: 2,
  SDG: 2,
  SEK: 2,
  SGD: 2,
  SHP: 2,
  SLE: 2,
  SOS: 2,
  SRD: 2,
  SSP: 2,
  STN: 2,
  SVC: 2,
  SYP: 2,
  SZL: 2,
  THB: 2,
  TJS: 2,
  TMT: 2,
  TND: 3,
  TOP: 2,
  TRY: 2,
  TTD: 2,
  TWD: 2,
  TZS: 2,
  UAH: 2,
  UGX: 0,
  USD: 2,
  USN: 2,
  UYI: 0,
  UYU: 2,
  UYW: 4,
  UZS: 2,
  VED: 2,
  VES: 2,
  VND: 0,
  VUV: 0,
  WST: 2,
  XAF: 0,
  XCD: 2,
  XCG: 2,
  XOF: 0,
  XPF: 0,
  YER: 2,
  ZAR: 2,
  ZMW: 2,
  ZWG: 2,
});

/** Stripe's 8-digit ceiling, in minor units, which it applies to every currency. */
export const MAX_AMOUNT_MINOR = 99_999_999;

/**
 * A currency code as a merchant may send it, its letters a to z upper-cased ("usd" is USD). ASCII only:
 * String#toUpperCase maps "ſ" to "S" and "ı" to "I", which would take "uſd" for USD.
 */
export function normaliseCurrencyCode(code: string): string {
  return code.replace(/[a-z]/g, (letter) => letter.toUpperCase());
}

export function isCurrency(code: string): boolean {
  return Object.hasOwn(CURRENCY_EXPONENTS, code);
}

// One wording for the thrown error and the validation message; a lowercase known code gets a hint.
function unknownCurrency(code: string): string {
  const upper = normaliseCurrencyCode(code);
  return isCurrency(upper) ? `unknown currency ${code} (codes are uppercase: ${upper})` : `unknown currency ${code}`;
}

/** The number of decimal places of `code`'s minor unit; throws on a code that is not in CURRENCY_EXPONENTS. */
export function minorUnitExponent(code: string): number {
  const exponent = isCurrency(code) ? CURRENCY_EXPONENTS[code] : undefined;
  if (exponent === undefined) throw new RangeError(unknownCurrency(code));
  return exponent;
}

/** Returns the rule a payment amount (in minor units) and currency break, or null when they are acceptable. */
export function amountProblem(amount: number, currency: string): string | null {
  if (!Number.isInteger(amount)) return 'must be an integer number of minor units (cents for USD, yen for JPY)';
  if (amount < 1) return 'must be at least 1';
  if (amount > MAX_AMOUNT_MINOR) return `must be at most ${MAX_AMOUNT_MINOR}`;
  if (!isCurrency(currency)) return unknownCurrency(currency);
  return null;
}

/** `formatMinor(1050, 'USD')` is "10.50 USD"; throws on an unknown currency or an amount that is not a safe integer. */
export function formatMinor(amount: number, currency: string): string {
  const exponent = minorUnitExponent(currency);
  // String(x) of a safe integer is plain digits (never exponent notation), so the decimal point can be placed by slicing.
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount must be a safe integer, got ${amount}`);
  const sign = amount < 0 ? '-' : '';
  const digits = String(Math.abs(amount)).padStart(exponent + 1, '0');
  const major = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return `${sign}${major} ${currency}`;
}

const MAJOR_AMOUNT_PATTERN = /^(\d+)(?:\.(\d+))?$/;

/**
 * The minor units of a plain decimal in major units ("10.50" USD is 1050), or null when the text is not a
 * non-negative decimal with at most the currency's number of decimal places, or is too large to be exact.
 * Range rules are amountProblem's; throws on an unknown currency.
 */
export function parseMajor(text: string, currency: string): number | null {
  const exponent = minorUnitExponent(currency);
  const match = MAJOR_AMOUNT_PATTERN.exec(text);
  if (!match) return null;
  const [, whole = '', fraction = ''] = match;
  if (fraction.length > exponent) return null;
  const minor = Number(whole + fraction.padEnd(exponent, '0'));
  return Number.isSafeInteger(minor) ? minor : null;
}
