// Card checks done before a card reaches a processor: format, check digit, brand, expiry and CVC. Messages name
// the rule only; the number and CVC never appear in them, since messages are returned to callers and logged.
// No imports: the browser SDK checks cards with these same rules before sending them, and its build bundles this
// file (packages/js/src/index.ts, checkCard; .dependency-cruiser.cjs holds both to it).
export type CardBrand = 'VISA' | 'MASTERCARD' | 'AMEX' | 'DISCOVER' | 'DINERS' | 'JCB' | 'UNIONPAY' | 'UNKNOWN';

export const MIN_CARD_NUMBER_LENGTH = 12;
export const MAX_CARD_NUMBER_LENGTH = 19;
export const MAX_EXPIRY_YEARS_AHEAD = 20;
export const MAX_HOLDER_NAME_LENGTH = 100;

// Issuer identification number ranges: a number belongs to a brand when its first digits, as many as the bounds
// have, lie within them (a shorter number's digits are always below the bound). The ranges do not overlap.
const BRAND_RANGES: readonly { brand: CardBrand; from: number; to: number }[] = [
  { brand: 'VISA', from: 4, to: 4 },
  { brand: 'MASTERCARD', from: 51, to: 55 },
  { brand: 'MASTERCARD', from: 2221, to: 2720 },
  { brand: 'AMEX', from: 34, to: 34 },
  { brand: 'AMEX', from: 37, to: 37 },
  { brand: 'DISCOVER', from: 6011, to: 6011 },
  { brand: 'DISCOVER', from: 644, to: 649 },
  { brand: 'DISCOVER', from: 65, to: 65 },
  { brand: 'DINERS', from: 300, to: 305 },
  { brand: 'DINERS', from: 36, to: 36 },
  { brand: 'DINERS', from: 38, to: 38 },
  { brand: 'JCB', from: 3528, to: 3589 },
  { brand: 'UNIONPAY', from: 62, to: 62 },
];

const DIGITS = /^\d+$/;

/** Removes the spaces and dashes people type to group the digits. */
export function normaliseCardNumber(number: string): string {
  return number.replace(/[ -]/g, '');
}

/** The Luhn (mod 10) check digit test, for a string of 12 to 19 digits; anything else is invalid. */
export function luhnValid(number: string): boolean {
  if (!DIGITS.test(number) || number.length < MIN_CARD_NUMBER_LENGTH || number.length > MAX_CARD_NUMBER_LENGTH) return false;
  let sum = 0;
  // Walking from the check digit leftwards, every second digit is doubled (and 9 subtracted when that exceeds 9).
  for (let index = 0; index < number.length; index += 1) {
    const digit = Number(number[number.length - 1 - index]);
    const weighted = index % 2 === 1 ? digit * 2 : digit;
    sum += weighted > 9 ? weighted - 9 : weighted;
  }
  return sum % 10 === 0;
}

export function cardBrand(number: string): CardBrand {
  const digits = normaliseCardNumber(number);
  if (!DIGITS.test(digits)) return 'UNKNOWN';
  const range = BRAND_RANGES.find(({ from, to }) => {
    const prefix = Number(digits.slice(0, String(from).length));
    return prefix >= from && prefix <= to;
  });
  return range?.brand ?? 'UNKNOWN';
}

export function cvcLength(brand: CardBrand): number {
  return brand === 'AMEX' ? 4 : 3;
}

type ExpiryField = 'expiryMonth' | 'expiryYear';

// Shared by expiryProblem and cardProblem, so the rules exist once and cardProblem can name the field at fault.
function expiryRuleBroken(month: number, year: number, now: Date): { field: ExpiryField; message: string } | null {
  if (!Number.isInteger(month) || month < 1 || month > 12) {
    return { field: 'expiryMonth', message: 'month must be an integer from 1 to 12' };
  }
  if (!Number.isInteger(year) || year < 1000 || year > 9999) return { field: 'expiryYear', message: 'year must be a 4-digit integer' };
  // A card is usable through the last millisecond of its expiry month; Date.UTC's month is 0-based, so passing the
  // 1-based month gives the first millisecond of the following month.
  if (now.getTime() >= Date.UTC(year, month, 1)) {
    const field = year < now.getUTCFullYear() ? 'expiryYear' : 'expiryMonth';
    return { field, message: 'the card has expired (expiry must not be before the current month)' };
  }
  if (year > now.getUTCFullYear() + MAX_EXPIRY_YEARS_AHEAD) {
    return { field: 'expiryYear', message: `year must be at most ${MAX_EXPIRY_YEARS_AHEAD} years ahead` };
  }
  return null;
}

/** Returns the rule an expiry date breaks at `now`, or null when the card has not expired. */
export function expiryProblem(month: number, year: number, now: Date): string | null {
  return expiryRuleBroken(month, year, now)?.message ?? null;
}

export interface CardInput {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  cvc: string;
  holderName?: string | null;
}

type CardProblem = { field: string; message: string };

/** Every rule the card breaks, at most one per field, in the order a form shows them (number, expiry, CVC, holder). */
export function cardProblems(card: CardInput, now: Date): CardProblem[] {
  return [numberProblem(card), expiryFieldProblem(card, now), cvcProblem(card), holderNameProblem(card)].filter((problem) => problem !== null);
}

/** The first rule the card breaks, with the dotted input field that breaks it, or null when it is acceptable. */
export function cardProblem(card: CardInput, now: Date): CardProblem | null {
  return cardProblems(card, now)[0] ?? null;
}

/** cardProblem for a card that is paid to (a payout), not charged: no CVC is involved. */
export function cardWithoutCvcProblem(card: Omit<CardInput, 'cvc'>, now: Date): CardProblem | null {
  return numberProblem(card) ?? expiryFieldProblem(card, now) ?? holderNameProblem(card);
}

function holderNameProblem(card: Pick<CardInput, 'holderName'>): CardProblem | null {
  if (card.holderName != null && card.holderName.length > MAX_HOLDER_NAME_LENGTH) {
    return { field: 'card.holderName', message: `must be at most ${MAX_HOLDER_NAME_LENGTH} characters` };
  }
  return null;
}

function numberProblem(card: Pick<CardInput, 'number'>): CardProblem | null {
  const number = normaliseCardNumber(card.number);
  if (!DIGITS.test(number)) return { field: 'card.number', message: 'must contain only digits, spaces and dashes' };
  if (number.length < MIN_CARD_NUMBER_LENGTH || number.length > MAX_CARD_NUMBER_LENGTH) {
    return { field: 'card.number', message: `must be ${MIN_CARD_NUMBER_LENGTH} to ${MAX_CARD_NUMBER_LENGTH} digits` };
  }
  if (!luhnValid(number)) return { field: 'card.number', message: 'is not a valid card number (the check digit does not match)' };
  return null;
}

function expiryFieldProblem(card: Pick<CardInput, 'expiryMonth' | 'expiryYear'>, now: Date): CardProblem | null {
  const expiry = expiryRuleBroken(card.expiryMonth, card.expiryYear, now);
  return expiry ? { field: `card.${expiry.field}`, message: expiry.message } : null;
}

function cvcProblem(card: Pick<CardInput, 'number' | 'cvc'>): CardProblem | null {
  const length = cvcLength(cardBrand(normaliseCardNumber(card.number)));
  return DIGITS.test(card.cvc) && card.cvc.length === length ? null : { field: 'card.cvc', message: `must be ${length} digits` };
}

/** The last four digits, the part of a number that may be shown and stored. */
export function last4(number: string): string {
  return normaliseCardNumber(number).slice(-4);
}
