// The sandbox's test cards and what each one does, paid with or paid out to. TEST_CARDS is the one source of
// truth: the server decides outcomes from it and the tests walk it, so a new row is served with no other change.
// The sandbox checks numbers itself rather than through src/kernel/cards.ts: it stands in for an outside
// processor, and a processor sharing the service's own checks would hide a bug in them.
import {
  APPROVED,
  NO_DISPUTE,
  PAYOUTS_PAID,
  PAYOUT_EXPIRES,
  PAYOUT_TO_EXPIRED_CARD,
  REFUNDS_SUCCEED,
  failed,
  payoutFails,
  type DisputeBehaviour,
  type Outcome,
  type PayoutBehaviour,
  type ProcessorError,
  type RefundBehaviour,
} from './outcomes.ts';

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'unknown';

export type CardOutcome = Outcome | { kind: 'challenge' };

/** `part` of `of` of any amount, rounded down: integers, so the share is exact (no floating point). */
export interface Share {
  part: number;
  of: number;
}

export interface TestCard {
  number: string;
  outcome: CardOutcome;
  /** What the payment's refunds do; absent, they succeed at once. */
  refund?: RefundBehaviour;
  /** Whether the customer's bank disputes the payment by itself; absent, it does not. */
  dispute?: DisputeBehaviour;
  /** What a payout to the card does; absent, it is sent and paid. */
  payout?: PayoutBehaviour;
  /**
   * The share of any amount the card's funds cover; absent, all of it. Less than the amount is a partial
   * authorization, which only a payment sending `partial_authorization: "allowed"` takes (cardFunds).
   */
  funds?: Share;
}

/** A processor's own answer for one number or a whole brand, taking precedence over TEST_CARDS (see processors.ts). */
export type CardRule = ({ number: string } | { brand: CardBrand }) & { outcome: CardOutcome };

export const EXPIRED_CARD: ProcessorError = { code: 'expired_card', message: 'Your card has expired.', retryable: false };

export const INSUFFICIENT_FUNDS: ProcessorError = { code: 'insufficient_funds', message: 'Your card has insufficient funds.', retryable: false };

export const AUTHENTICATION_FAILED: ProcessorError = {
  code: 'authentication_failed',
  message: 'The customer failed 3D Secure authentication.',
  retryable: false,
};

export const TEST_CARDS: readonly TestCard[] = [
  { number: '4242424242424242', outcome: APPROVED },
  { number: '5555555555554444', outcome: APPROVED },
  { number: '378282246310005', outcome: APPROVED },
  { number: '4000002500003155', outcome: { kind: 'challenge' } },
  {
    number: '4000000000000002',
    outcome: failed('card_declined', 'Your card was declined.'),
    payout: payoutFails('card_declined', "The destination card's issuer declined the payout."),
  },
  { number: '4000000000009995', outcome: { kind: 'failed', error: INSUFFICIENT_FUNDS } },
  // Approved, but for half the amount at most: a partial authorization, or a decline without one.
  { number: '4000000000001976', outcome: APPROVED, funds: { part: 1, of: 2 } },
  { number: '4000000000000069', outcome: { kind: 'failed', error: EXPIRED_CARD } },
  { number: '4000000000000119', outcome: failed('processing_error', 'An error occurred while processing your card. Try again.', true) },
  { number: '4000000000000127', outcome: failed('incorrect_cvc', "Your card's security code is incorrect.") },
  { number: '4000000000007726', outcome: APPROVED, refund: { kind: 'settles', outcome: { status: 'succeeded' } } },
  {
    number: '4000000000005126',
    outcome: APPROVED,
    refund: { kind: 'settles', outcome: { status: 'failed', error: { code: 'refund_failed', message: 'The bank could not return the funds.' } } },
  },
  { number: '4000000000006975', outcome: APPROVED, refund: { kind: 'review' } },
  { number: '4000000000000259', outcome: APPROVED, dispute: { kind: 'opens', reason: 'fraudulent' } },
  { number: '4000000000000077', outcome: APPROVED, payout: PAYOUT_EXPIRES },
];

const TEST_CARD_BY_NUMBER = new Map(TEST_CARDS.map((card) => [card.number, card]));

/** The Luhn (mod 10) check: walking left from the check digit, every second digit is doubled. */
export function luhnValid(number: string): boolean {
  if (!/^\d+$/.test(number)) return false;
  let sum = 0;
  for (let index = 0; index < number.length; index += 1) {
    const digit = Number(number[number.length - 1 - index]);
    const weighted = index % 2 === 1 ? digit * 2 : digit;
    sum += weighted > 9 ? weighted - 9 : weighted;
  }
  return sum % 10 === 0;
}

export function cardBrand(number: string): CardBrand {
  if (number.startsWith('4')) return 'visa';
  const two = Number(number.slice(0, 2));
  const four = Number(number.slice(0, 4));
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  if (two === 34 || two === 37) return 'amex';
  return 'unknown';
}

interface CardToCheck {
  number: string;
  expMonth: number;
  expYear: number;
}

/**
 * Whether `card` is past its expiry at `now`. A card is usable through the last millisecond of its expiry
 * month (UTC); Date.UTC's month is 0-based, so the 1-based month gives the next month's start.
 */
const hasExpired = (card: CardToCheck, now: Date) => now.getTime() >= Date.UTC(card.expYear, card.expMonth, 1);

/** What a processor with `rules` does with a Luhn-valid card at `now`; an expired card declines first. */
export function cardOutcome(card: CardToCheck, now: Date, rules: readonly CardRule[]): CardOutcome {
  if (hasExpired(card, now)) return { kind: 'failed', error: EXPIRED_CARD };
  const rule = rules.find((candidate) => ('number' in candidate ? candidate.number === card.number : candidate.brand === cardBrand(card.number)));
  return rule?.outcome ?? TEST_CARD_BY_NUMBER.get(card.number)?.outcome ?? APPROVED;
}

/**
 * What becomes of a payment with the card `number` after it succeeded, as its test row says: what its refunds
 * do (success at once otherwise) and whether the customer's bank disputes it (not otherwise).
 */
export function cardBehaviours(number: string): { refundBehaviour: RefundBehaviour; disputeBehaviour: DisputeBehaviour } {
  const row = TEST_CARD_BY_NUMBER.get(number);
  return { refundBehaviour: row?.refund ?? REFUNDS_SUCCEED, disputeBehaviour: row?.dispute ?? NO_DISPUTE };
}

/** What a payout to a Luhn-valid card does, created at `now`: refused if the card has expired, else as its test row says (paid otherwise). */
export function cardPayoutBehaviour(card: CardToCheck, now: Date): PayoutBehaviour {
  if (hasExpired(card, now)) return PAYOUT_TO_EXPIRED_CARD;
  return TEST_CARD_BY_NUMBER.get(card.number)?.payout ?? PAYOUTS_PAID;
}

/** A card payment's authorization as the card's funds allow it: `amount` is what it holds or captures. */
export type FundsDecision = { kind: 'approved'; amount: number } | { kind: 'failed'; error: ProcessorError };

/**
 * What the card `number`'s funds allow of `amount`, as its test row says: all of it (any card without a
 * `funds` row), or its share when the payment allows a partial authorization; a decline for insufficient funds
 * when it does not, or when the share rounds down to nothing.
 */
export function cardFunds(number: string, amount: number, partialAllowed: boolean): FundsDecision {
  const share = TEST_CARD_BY_NUMBER.get(number)?.funds;
  const covered = share === undefined ? amount : Math.min(amount, Math.floor((amount * share.part) / share.of));
  if (covered === amount) return { kind: 'approved', amount };
  if (!partialAllowed || covered < 1) return { kind: 'failed', error: INSUFFICIENT_FUNDS };
  return { kind: 'approved', amount: covered };
}
