import { describe, expect, it } from 'vitest';
import { CURRENCY_EXPONENTS, MAX_AMOUNT_MINOR, amountProblem, formatMinor, isCurrency, minorUnitExponent, parseMajor } from '../../src/kernel/money.ts';
import { prng } from '../support/prng.ts';

// Amounts of every magnitude from 0 to 15 digits, so short ones (fewer digits than the exponent) are covered too.
function randomAmount(random: () => number): number {
  const digits = Math.floor(random() * 16);
  return Math.floor(random() * 10 ** digits);
}

const currencies = Object.keys(CURRENCY_EXPONENTS);

describe('CURRENCY_EXPONENTS', () => {
  it.each(currencies)('%s is three uppercase letters with an integer exponent from 0 to 4', (code) => {
    expect(code).toMatch(/^[A-Z]{3}$/);
    const exponent = CURRENCY_EXPONENTS[code];
    expect(Number.isInteger(exponent)).toBe(true);
    expect(exponent).toBeGreaterThanOrEqual(0);
    expect(exponent).toBeLessThanOrEqual(4);
  });

  it('holds the whole active list (between 150 and 170 codes)', () => {
    expect(currencies.length).toBeGreaterThanOrEqual(150);
    expect(currencies.length).toBeLessThanOrEqual(170);
  });

  it('cannot be modified', () => {
    expect(Object.isFrozen(CURRENCY_EXPONENTS)).toBe(true);
  });

  it.each([
    ['USD', 2],
    ['EUR', 2],
    ['GBP', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['VND', 0],
    ['CLP', 0],
    ['ISK', 0],
    ['XAF', 0],
    ['XOF', 0],
    ['XPF', 0],
    ['UGX', 0],
    ['PYG', 0],
    ['RWF', 0],
    ['KMF', 0],
    ['GNF', 0],
    ['DJF', 0],
    ['BIF', 0],
    ['VUV', 0],
    ['KWD', 3],
    ['BHD', 3],
    ['OMR', 3],
    ['JOD', 3],
    ['IQD', 3],
    ['LYD', 3],
    ['TND', 3],
    ['CLF', 4],
    ['UYW', 4],
  ])('%s has exponent %i, as ISO 4217 lists it', (code, exponent) => {
    expect(CURRENCY_EXPONENTS[code]).toBe(exponent);
    expect(minorUnitExponent(code)).toBe(exponent);
    expect(isCurrency(code)).toBe(true);
  });

  it('lists every other active currency with exponent 2', () => {
    const notTwo = Object.entries(CURRENCY_EXPONENTS)
      .filter(([, exponent]) => exponent !== 2)
      .map(([code]) => code);
    expect(notTwo.sort()).toEqual(
      [
        'BIF',
        'CLP',
        'DJF',
        'GNF',
        'ISK',
        'JPY',
        'KMF',
        'KRW',
        'PYG',
        'RWF',
        'UGX',
        'UYI',
        'VND',
        'VUV',
        'XAF',
        'XOF',
        'XPF',
        'BHD',
        'IQD',
        'JOD',
        'KWD',
        'LYD',
        'OMR',
        'TND',
        'CLF',
        'UYW',
      ].sort(),
    );
  });

  it.each(['CAD', 'AUD', 'CHF', 'CNY', 'INR', 'MXN', 'BRL', 'ZAR', 'SEK', 'NOK', 'HUF', 'XCG', 'SLE', 'ZWG', 'VES'])('includes %s', (code) =>
    expect(isCurrency(code)).toBe(true),
  );

  it.each(['XAU', 'XAG', 'XPT', 'XPD', 'XTS', 'XXX', 'XDR', 'XSU', 'XUA', 'XAD', 'XBA', 'XBB', 'XBC', 'XBD', 'HRK', 'SLL', 'VEF', 'ANG'])(
    'excludes %s (not money, or withdrawn)',
    (code) => {
      expect(isCurrency(code)).toBe(false);
      expect(code in CURRENCY_EXPONENTS).toBe(false);
    },
  );
});

describe('isCurrency', () => {
  it.each(['usd', 'Usd', 'US', 'USDD', '', ' USD', 'toString', 'constructor', '__proto__', 'hasOwnProperty'])('is false for %j', (code) =>
    expect(isCurrency(code)).toBe(false),
  );
});

describe('minorUnitExponent', () => {
  it.each(['XYZ', 'usd', '', 'toString', '__proto__'])('throws on %j', (code) => {
    expect(() => minorUnitExponent(code)).toThrow(`unknown currency ${code}`);
  });

  it('hints that codes are uppercase', () => {
    expect(() => minorUnitExponent('jpy')).toThrow('unknown currency jpy (codes are uppercase: JPY)');
  });
});

describe('amountProblem', () => {
  const integerRule = 'must be an integer number of minor units (cents for USD, yen for JPY)';
  it.each([
    [0, 'USD', 'must be at least 1'],
    [-0, 'USD', 'must be at least 1'],
    [-1, 'USD', 'must be at least 1'],
    [-100, 'JPY', 'must be at least 1'],
    [1.5, 'USD', integerRule],
    [0.5, 'USD', integerRule],
    [10.000001, 'USD', integerRule],
    [Number.NaN, 'USD', integerRule],
    [Number.POSITIVE_INFINITY, 'USD', integerRule],
    [Number.NEGATIVE_INFINITY, 'USD', integerRule],
    [1e9, 'USD', 'must be at most 99999999'],
    [100_000_000, 'USD', 'must be at most 99999999'],
    [100_000_000, 'JPY', 'must be at most 99999999'],
    [Number.MAX_SAFE_INTEGER, 'USD', 'must be at most 99999999'],
    [100, 'XYZ', 'unknown currency XYZ'],
    [100, 'usd', 'unknown currency usd (codes are uppercase: USD)'],
    [100, 'US', 'unknown currency US'],
    [100, '', 'unknown currency '],
    [100, 'XAU', 'unknown currency XAU'],
    [100, 'toString', 'unknown currency toString'],
  ])('(%s, %j) breaks "%s"', (amount, currency, rule) => {
    expect(amountProblem(amount, currency)).toBe(rule);
  });

  it.each([
    [1, 'USD'],
    [99_999_999, 'USD'],
    [99_999_999, 'JPY'],
    [99_999_999, 'KWD'],
    [1050, 'EUR'],
    [1, 'CLF'],
  ])('(%s, %s) is acceptable', (amount, currency) => {
    expect(amountProblem(amount, currency)).toBeNull();
  });

  it('is 99,999,999 minor units at most, for every currency', () => {
    expect(MAX_AMOUNT_MINOR).toBe(99_999_999);
    for (const currency of currencies) {
      expect(amountProblem(MAX_AMOUNT_MINOR, currency), currency).toBeNull();
      expect(amountProblem(MAX_AMOUNT_MINOR + 1, currency), currency).toBe('must be at most 99999999');
    }
  });
});

describe('formatMinor', () => {
  it.each([
    [1050, 'USD', '10.50 USD'],
    [500, 'JPY', '500 JPY'],
    [1234, 'KWD', '1.234 KWD'],
    [1, 'USD', '0.01 USD'],
    [10, 'USD', '0.10 USD'],
    [0, 'USD', '0.00 USD'],
    [0, 'JPY', '0 JPY'],
    [5, 'KWD', '0.005 KWD'],
    [12_345, 'CLF', '1.2345 CLF'],
    [7, 'UYW', '0.0007 UYW'],
    [115, 'USD', '1.15 USD'],
    [99_999_999, 'USD', '999999.99 USD'],
    [Number.MAX_SAFE_INTEGER, 'USD', '90071992547409.91 USD'],
    [-1050, 'USD', '-10.50 USD'],
    [-5, 'KWD', '-0.005 KWD'],
  ])('(%s, %s) is %j', (amount, currency, text) => {
    expect(formatMinor(amount, currency)).toBe(text);
  });

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1e21])('throws on the amount %s', (amount) => {
    expect(() => formatMinor(amount, 'USD')).toThrow(RangeError);
  });

  it('throws on an unknown currency', () => {
    expect(() => formatMinor(100, 'XYZ')).toThrow('unknown currency XYZ');
  });
});

describe('parseMajor', () => {
  it.each([
    ['10.50', 'USD', 1050],
    ['10.5', 'USD', 1050],
    ['10', 'USD', 1000],
    ['0.01', 'USD', 1],
    ['0', 'USD', 0],
    ['010.50', 'USD', 1050],
    ['500', 'JPY', 500],
    ['1.234', 'KWD', 1234],
    ['1.2', 'KWD', 1200],
    ['1.2345', 'CLF', 12_345],
    // Floating point would get these wrong: 1.15 * 100 and 0.29 * 100 are not whole numbers.
    ['1.15', 'USD', 115],
    ['0.29', 'USD', 29],
    ['4.35', 'USD', 435],
    ['90071992547409.91', 'USD', Number.MAX_SAFE_INTEGER],
  ])('%j %s is %i', (text, currency, amount) => {
    expect(parseMajor(text, currency)).toBe(amount);
  });

  it.each([
    ['10.505', 'USD'],
    ['10.500', 'USD'],
    ['1.5', 'JPY'],
    ['1.0', 'JPY'],
    ['1.2345', 'KWD'],
    ['1.23456', 'CLF'],
    ['-1', 'USD'],
    ['-10.50', 'USD'],
    ['+1', 'USD'],
    ['', 'USD'],
    ['.5', 'USD'],
    ['10.', 'USD'],
    ['10.50 USD', 'USD'],
    [' 10.50', 'USD'],
    ['10.50\n', 'USD'],
    ['10,50', 'USD'],
    ['1,000', 'USD'],
    ['1e3', 'USD'],
    ['0x10', 'USD'],
    ['Infinity', 'USD'],
    ['NaN', 'USD'],
    ['abc', 'USD'],
    ['１０', 'USD'],
    ['١٠', 'USD'],
    ['90071992547409.92', 'USD'],
    ['99999999999999999999', 'JPY'],
  ])('%j %s is rejected', (text, currency) => {
    expect(parseMajor(text, currency)).toBeNull();
  });

  it('throws on an unknown currency', () => {
    expect(() => parseMajor('1', 'XYZ')).toThrow('unknown currency XYZ');
  });
});

describe('formatMinor and parseMajor (property)', () => {
  const random = prng(4217);

  it.each(currencies)('round-trip random amounts in %s', (currency) => {
    const exponent = minorUnitExponent(currency);
    const amounts = [0, 1, 9, 10, 99, 100, MAX_AMOUNT_MINOR, Number.MAX_SAFE_INTEGER];
    for (let index = 0; index < 200; index += 1) amounts.push(randomAmount(random));
    for (const amount of amounts) {
      const formatted = formatMinor(amount, currency);
      expect(formatted.endsWith(` ${currency}`)).toBe(true);
      const number = formatted.slice(0, -(currency.length + 1));
      expect(parseMajor(number, currency), formatted).toBe(amount);
      // Exactly `exponent` decimals are written, and one more is never accepted.
      expect(number.split('.')[1]?.length ?? 0).toBe(exponent);
      expect(parseMajor(exponent === 0 ? `${number}.0` : `${number}0`, currency), formatted).toBeNull();
    }
  });
});
