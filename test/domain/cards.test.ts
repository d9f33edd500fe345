import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  MAX_EXPIRY_YEARS_AHEAD,
  MAX_HOLDER_NAME_LENGTH,
  cardBrand,
  cardProblem,
  cardProblems,
  cvcLength,
  expiryProblem,
  last4,
  luhnValid,
  normaliseCardNumber,
  type CardBrand,
  type CardInput,
} from '../../src/kernel/cards.ts';
import { cardFingerprint } from '../../src/kernel/card-fingerprint.ts';
import { prng } from '../support/prng.ts';

// An independent Luhn check digit (table lookup for the doubled digits), to build valid numbers for the properties.
const DOUBLED = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9];
function withCheckDigit(body: string): string {
  let sum = 0;
  [...body].reverse().forEach((char, index) => {
    sum += index % 2 === 0 ? (DOUBLED[Number(char)] ?? Number.NaN) : Number(char);
  });
  return `${body}${(10 - (sum % 10)) % 10}`;
}

function randomValidNumber(random: () => number): string {
  const length = 12 + Math.floor(random() * 8);
  let body = '';
  for (let index = 0; index < length - 1; index += 1) body += String(Math.floor(random() * 10));
  return withCheckDigit(body);
}

// Stripe's and the networks' published test numbers.
const KNOWN_VALID: [string, CardBrand][] = [
  ['4242424242424242', 'VISA'],
  ['4111111111111111', 'VISA'],
  ['4000056655665556', 'VISA'],
  ['5555555555554444', 'MASTERCARD'],
  ['2223003122003222', 'MASTERCARD'],
  ['5200828282828210', 'MASTERCARD'],
  ['378282246310005', 'AMEX'],
  ['371449635398431', 'AMEX'],
  ['6011111111111117', 'DISCOVER'],
  ['6011000990139424', 'DISCOVER'],
  ['3056930009020004', 'DINERS'],
  ['36227206271667', 'DINERS'],
  ['3566002020360505', 'JCB'],
  ['3530111333300000', 'JCB'],
  ['6200000000000005', 'UNIONPAY'],
];

describe('luhnValid', () => {
  it.each(KNOWN_VALID)('accepts %s', (number) => {
    expect(luhnValid(number)).toBe(true);
  });

  it.each([
    ['400000000002', '12 digits, the shortest'],
    ['6212345678901234569', '19 digits, the longest'],
    ['620000000000000005', '18 digits'],
  ])('accepts %s (%s)', (number) => {
    expect(luhnValid(number)).toBe(true);
  });

  it.each([
    ['4242424242424241', 'wrong check digit'],
    ['4111111111111112', 'wrong check digit'],
    ['378282246310006', 'wrong check digit'],
    ['4242424242424224', 'two digits swapped'],
    ['79927398713', 'Luhn-valid but 11 digits'],
    ['41111111111111111115', 'Luhn-valid but 20 digits'],
  ])('rejects %s (%s)', (number) => {
    expect(luhnValid(number)).toBe(false);
  });

  it('is the checksum and length only: twelve zeros pass', () => {
    expect(luhnValid('000000000000')).toBe(true);
  });

  it.each([
    ['4242 4242 4242 4242', 'spaces'],
    ['4242-4242-4242-4242', 'dashes'],
    ['', 'empty'],
    ['424242424242424a', 'a letter'],
    ['-4242424242424242', 'a sign'],
    ['４２４２４２４２４２４２４２４２', 'full-width digits'],
  ])('rejects %j (%s): digits only', (number) => {
    expect(luhnValid(number)).toBe(false);
  });

  it('property: a generated number is valid, and changing any one digit to any other makes it invalid', () => {
    const random = prng(1954);
    for (let run = 0; run < 300; run += 1) {
      const number = randomValidNumber(random);
      expect(luhnValid(number), number).toBe(true);
      for (let position = 0; position < number.length; position += 1) {
        for (let digit = 0; digit <= 9; digit += 1) {
          if (String(digit) === number[position]) continue;
          const changed = `${number.slice(0, position)}${digit}${number.slice(position + 1)}`;
          expect(luhnValid(changed), `${number} -> ${changed}`).toBe(false);
        }
      }
    }
  });

  it('property: of the ten possible last digits, exactly one is valid', () => {
    const random = prng(10);
    for (let run = 0; run < 300; run += 1) {
      const body = randomValidNumber(random).slice(0, -1);
      const valid = Array.from({ length: 10 }, (_, digit) => `${body}${digit}`).filter((number) => luhnValid(number));
      expect(valid).toEqual([withCheckDigit(body)]);
    }
  });
});

describe('cardBrand', () => {
  it.each(KNOWN_VALID)('%s is %s', (number, brand) => {
    expect(cardBrand(number)).toBe(brand);
  });

  // Each range's bounds and the prefixes just outside them, padded to 16 digits.
  it.each([
    ['31', 'UNKNOWN'],
    ['4', 'VISA'],
    ['49', 'VISA'],
    ['50', 'UNKNOWN'],
    ['51', 'MASTERCARD'],
    ['55', 'MASTERCARD'],
    ['56', 'UNKNOWN'],
    ['2220', 'UNKNOWN'],
    ['2221', 'MASTERCARD'],
    ['2720', 'MASTERCARD'],
    ['2721', 'UNKNOWN'],
    ['33', 'UNKNOWN'],
    ['34', 'AMEX'],
    ['37', 'AMEX'],
    ['6010', 'UNKNOWN'],
    ['6011', 'DISCOVER'],
    ['6012', 'UNKNOWN'],
    ['643', 'UNKNOWN'],
    ['644', 'DISCOVER'],
    ['649', 'DISCOVER'],
    ['650', 'DISCOVER'],
    ['659', 'DISCOVER'],
    ['66', 'UNKNOWN'],
    ['299', 'UNKNOWN'],
    ['300', 'DINERS'],
    ['305', 'DINERS'],
    ['306', 'UNKNOWN'],
    ['36', 'DINERS'],
    ['38', 'DINERS'],
    ['39', 'UNKNOWN'],
    ['3527', 'UNKNOWN'],
    ['3528', 'JCB'],
    ['3589', 'JCB'],
    ['3590', 'UNKNOWN'],
    ['61', 'UNKNOWN'],
    ['62', 'UNIONPAY'],
    ['63', 'UNKNOWN'],
    ['1', 'UNKNOWN'],
    ['0', 'UNKNOWN'],
    ['7', 'UNKNOWN'],
    ['8', 'UNKNOWN'],
    ['9', 'UNKNOWN'],
  ])('numbers starting %s are %s', (prefix, brand) => {
    expect(cardBrand(prefix.padEnd(16, '0'))).toBe(brand);
  });

  it.each([
    ['4242 4242 4242 4242', 'VISA'],
    ['2 2 2 1-0000-0000-0000', 'MASTERCARD'],
    ['3-5-2-8 0000 0000 0000', 'JCB'],
  ])('reads the digits of %j, ignoring spaces and dashes, as %s', (number, brand) => {
    expect(cardBrand(number)).toBe(brand);
  });

  it.each([
    ['', 'UNKNOWN', 'empty'],
    ['30', 'UNKNOWN', 'shorter than the 300-305 prefix'],
    ['601', 'UNKNOWN', 'shorter than the 6011 prefix'],
    ['4', 'VISA', 'as long as the Visa prefix'],
    ['4242x', 'UNKNOWN', 'a letter'],
  ])('%j is %s (%s)', (number, brand) => {
    expect(cardBrand(number)).toBe(brand);
  });
});

describe('cvcLength', () => {
  it.each<[CardBrand, number]>([
    ['AMEX', 4],
    ['VISA', 3],
    ['MASTERCARD', 3],
    ['DISCOVER', 3],
    ['DINERS', 3],
    ['JCB', 3],
    ['UNIONPAY', 3],
    ['UNKNOWN', 3],
  ])('%s is %i', (brand, length) => {
    expect(cvcLength(brand)).toBe(length);
  });
});

describe('expiryProblem', () => {
  const now = new Date(Date.UTC(2025, 5, 15, 12)); // 15 June 2025, noon UTC
  const expired = 'the card has expired (expiry must not be before the current month)';

  it.each([
    [6, 2025, 'the current month'],
    [7, 2025, 'next month'],
    [1, 2026, 'next year'],
    [12, 2045, 'the last month of the year 20 years ahead'],
  ])('%i/%i is acceptable (%s)', (month, year) => {
    expect(expiryProblem(month, year, now)).toBeNull();
  });

  it.each([
    [5, 2025, expired],
    [1, 2025, expired],
    [12, 2024, expired],
    [6, 2024, expired],
    [1, 2046, 'year must be at most 20 years ahead'],
    [0, 2026, 'month must be an integer from 1 to 12'],
    [13, 2026, 'month must be an integer from 1 to 12'],
    [-1, 2026, 'month must be an integer from 1 to 12'],
    [1.5, 2026, 'month must be an integer from 1 to 12'],
    [Number.NaN, 2026, 'month must be an integer from 1 to 12'],
    [6, 26, 'year must be a 4-digit integer'],
    [6, 999, 'year must be a 4-digit integer'],
    [6, 10_000, 'year must be a 4-digit integer'],
    [6, 2026.5, 'year must be a 4-digit integer'],
    [6, Number.NaN, 'year must be a 4-digit integer'],
    [6, Number.POSITIVE_INFINITY, 'year must be a 4-digit integer'],
  ])('%s/%s breaks "%s"', (month, year, rule) => {
    expect(expiryProblem(month, year, now)).toBe(rule);
  });

  it('checks the month before the year', () => {
    expect(expiryProblem(13, 26, now)).toBe('month must be an integer from 1 to 12');
  });

  it.each([
    [6, 2025, Date.UTC(2025, 5, 30, 23, 59, 59, 999), Date.UTC(2025, 6, 1)],
    [2, 2024, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2024, 2, 1)],
    [2, 2025, Date.UTC(2025, 1, 28, 23, 59, 59, 999), Date.UTC(2025, 2, 1)],
    [12, 2025, Date.UTC(2025, 11, 31, 23, 59, 59, 999), Date.UTC(2026, 0, 1)],
    [1, 2026, Date.UTC(2026, 0, 31, 23, 59, 59, 999), Date.UTC(2026, 1, 1)],
  ])('%i/%i is valid through the last ms of the month (UTC) and expired from the next', (month, year, lastMs, nextMs) => {
    expect(nextMs - lastMs).toBe(1);
    expect(expiryProblem(month, year, new Date(lastMs))).toBeNull();
    expect(expiryProblem(month, year, new Date(nextMs))).toBe(expired);
  });

  it(`allows exactly ${MAX_EXPIRY_YEARS_AHEAD} years ahead, counted in calendar years (UTC)`, () => {
    expect(MAX_EXPIRY_YEARS_AHEAD).toBe(20);
    const newYearsEve = new Date(Date.UTC(2025, 11, 31, 23, 59, 59, 999));
    expect(expiryProblem(12, 2045, newYearsEve)).toBeNull();
    expect(expiryProblem(1, 2046, newYearsEve)).toBe('year must be at most 20 years ahead');
    const newYear = new Date(Date.UTC(2026, 0, 1));
    expect(expiryProblem(1, 2046, newYear)).toBeNull();
    expect(expiryProblem(12, 2046, newYear)).toBeNull();
    expect(expiryProblem(1, 2047, newYear)).toBe('year must be at most 20 years ahead');
  });
});

describe('cardProblem', () => {
  const now = new Date(Date.UTC(2025, 5, 15, 12));
  const valid: CardInput = { number: '4242424242424242', expiryMonth: 12, expiryYear: 2030, cvc: '123', holderName: 'Ada Lovelace' };

  it.each<[string, Partial<CardInput>]>([
    ['a Visa card', {}],
    ['a number with spaces', { number: '4242 4242 4242 4242' }],
    ['a number with dashes', { number: '4242-4242-4242-4242' }],
    ['an Amex card with a 4-digit CVC', { number: '3782 822463 10005', cvc: '1234' }],
    ['a 12-digit number', { number: '400000000002' }],
    ['a 19-digit number', { number: '6212345678901234569' }],
    ['no holder name', { holderName: undefined }],
    ['a null holder name', { holderName: null }],
    ['an empty holder name', { holderName: '' }],
    [`a ${MAX_HOLDER_NAME_LENGTH}-character holder name`, { holderName: 'a'.repeat(MAX_HOLDER_NAME_LENGTH) }],
    ['a CVC starting with 0', { cvc: '007' }],
    ['the current month', { expiryMonth: 6, expiryYear: 2025 }],
  ])('accepts %s', (_, change) => {
    expect(cardProblem({ ...valid, ...change }, now)).toBeNull();
  });

  it.each<[string, string, string, Partial<CardInput>]>([
    ['letters', 'card.number', 'must contain only digits, spaces and dashes', { number: '4242 4242 4242 abcd' }],
    ['dots', 'card.number', 'must contain only digits, spaces and dashes', { number: '4242.4242.4242.4242' }],
    ['an empty number', 'card.number', 'must contain only digits, spaces and dashes', { number: '' }],
    ['only spaces', 'card.number', 'must contain only digits, spaces and dashes', { number: '    ' }],
    ['11 digits', 'card.number', 'must be 12 to 19 digits', { number: '79927398713' }],
    ['20 digits', 'card.number', 'must be 12 to 19 digits', { number: '41111111111111111115' }],
    ['a bad check digit', 'card.number', 'is not a valid card number (the check digit does not match)', { number: '4242424242424241' }],
    ['month 0', 'card.expiryMonth', 'month must be an integer from 1 to 12', { expiryMonth: 0 }],
    ['month 13', 'card.expiryMonth', 'month must be an integer from 1 to 12', { expiryMonth: 13 }],
    ['a 2-digit year', 'card.expiryYear', 'year must be a 4-digit integer', { expiryYear: 30 }],
    ['last month', 'card.expiryMonth', 'the card has expired (expiry must not be before the current month)', { expiryMonth: 5, expiryYear: 2025 }],
    ['last year', 'card.expiryYear', 'the card has expired (expiry must not be before the current month)', { expiryMonth: 12, expiryYear: 2024 }],
    ['21 years ahead', 'card.expiryYear', 'year must be at most 20 years ahead', { expiryYear: 2046 }],
    ['a 2-digit CVC', 'card.cvc', 'must be 3 digits', { cvc: '12' }],
    ['a 4-digit CVC on Visa', 'card.cvc', 'must be 3 digits', { cvc: '1234' }],
    ['a 3-digit CVC on Amex', 'card.cvc', 'must be 4 digits', { number: '378282246310005', cvc: '123' }],
    ['a letter in the CVC', 'card.cvc', 'must be 3 digits', { cvc: '12a' }],
    ['a CVC with a space', 'card.cvc', 'must be 3 digits', { cvc: '12 3' }],
    ['an empty CVC', 'card.cvc', 'must be 3 digits', { cvc: '' }],
    ['a long holder name', 'card.holderName', 'must be at most 100 characters', { holderName: 'a'.repeat(MAX_HOLDER_NAME_LENGTH + 1) }],
  ])('rejects %s as %s: %s', (_, field, message, change) => {
    expect(cardProblem({ ...valid, ...change }, now)).toEqual({ field, message });
  });

  it.each<[string, Partial<CardInput>, string]>([
    ['number before expiry', { number: '4242424242424241', expiryMonth: 13 }, 'card.number'],
    ['expiry month before year', { expiryMonth: 13, expiryYear: 30 }, 'card.expiryMonth'],
    ['expiry before CVC', { expiryYear: 30, cvc: '1' }, 'card.expiryYear'],
    ['CVC before holder name', { cvc: '1', holderName: 'a'.repeat(101) }, 'card.cvc'],
  ])('checks %s', (_, change, field) => {
    expect(cardProblem({ ...valid, ...change }, now)?.field).toBe(field);
  });

  it('cardProblems names every field at fault at once, in the form’s order; cardProblem is its first', () => {
    const card = { ...valid, number: '4242424242424241', expiryMonth: 13, cvc: '1', holderName: 'a'.repeat(101) };
    expect(cardProblems(card, now).map((problem) => problem.field)).toEqual(['card.number', 'card.expiryMonth', 'card.cvc', 'card.holderName']);
    expect(cardProblems({ ...valid, expiryYear: 2001, cvc: '' }, now)).toEqual([
      { field: 'card.expiryYear', message: 'the card has expired (expiry must not be before the current month)' },
      { field: 'card.cvc', message: 'must be 3 digits' },
    ]);
    expect(cardProblem(card, now)).toEqual(cardProblems(card, now)[0]);
    expect(cardProblems(valid, now)).toEqual([]);
  });

  it('never puts the number or the CVC in a message', () => {
    const cards: CardInput[] = [
      { ...valid, number: '4242 4242 4242 424x', cvc: '98' },
      { ...valid, number: '42424242424', cvc: '98' },
      { ...valid, number: '4242-4242-4242-4241', cvc: '98' },
      { ...valid, expiryMonth: 13, cvc: '98' },
      { ...valid, expiryYear: 2001, cvc: '98' },
      { ...valid, cvc: '98' },
      { ...valid, cvc: '98765' },
      { ...valid, number: '378282246310005', cvc: '987' },
      { ...valid, cvc: '987', holderName: 'x'.repeat(101) },
    ];
    for (const card of cards) {
      const problem = cardProblem(card, now);
      expect(problem, JSON.stringify(card)).not.toBeNull();
      const digits = normaliseCardNumber(card.number).replace(/\D/g, '');
      for (const secret of [card.number, normaliseCardNumber(card.number), digits, digits.slice(-4), card.cvc]) {
        expect(problem?.message).not.toContain(secret);
        expect(problem?.field).not.toContain(secret);
      }
    }
  });
});

describe('normaliseCardNumber and last4', () => {
  it.each([
    ['4242 4242 4242 4242', '4242424242424242', '4242'],
    ['4000-0566-5566-5556', '4000056655665556', '5556'],
    [' 3782 822463 10005 ', '378282246310005', '0005'],
    ['4242424242424242', '4242424242424242', '4242'],
  ])('%j is %s, ending %s', (number, normalised, lastFour) => {
    expect(normaliseCardNumber(number)).toBe(normalised);
    expect(last4(number)).toBe(lastFour);
  });

  it('leaves other characters for validation to reject', () => {
    expect(normaliseCardNumber('4242.4242\t42')).toBe('4242.4242\t42');
  });
});

describe('cardFingerprint', () => {
  const key = Buffer.from('0123456789abcdef0123456789abcdef');
  const otherKey = Buffer.from('fedcba9876543210fedcba9876543210');

  it('is the hex HMAC-SHA256 of the normalised number under the key', () => {
    const expected = createHmac('sha256', key).update('4242424242424242').digest('hex');
    expect(cardFingerprint('4242424242424242', key)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is stable for the same card and key', () => {
    expect(cardFingerprint('4242424242424242', key)).toBe(cardFingerprint('4242424242424242', Buffer.from(key)));
  });

  it.each(['4242 4242 4242 4242', '4242-4242-4242-4242', ' 4242-4242 4242-4242 '])('ignores the spaces and dashes in %j', (number) => {
    expect(cardFingerprint(number, key)).toBe(cardFingerprint('4242424242424242', key));
  });

  it('differs by key', () => {
    expect(cardFingerprint('4242424242424242', key)).not.toBe(cardFingerprint('4242424242424242', otherKey));
  });

  it('differs by number, including numbers with the same last four digits', () => {
    const fingerprints = new Set(
      ['4242424242424242', '4000056655665556', '5555555555554444', '4012888888884242'].map((number) => cardFingerprint(number, key)),
    );
    expect(fingerprints.size).toBe(4);
  });

  it('does not contain the number', () => {
    expect(cardFingerprint('4242424242424242', key)).not.toContain('4242424242424242');
  });
});
