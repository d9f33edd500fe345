// The decline catalog (docs/declines.md): every code a failed payment's `errorCode` may carry from a processor's
// answer, whatever the processor, with what it means and whether another processor may be tried. Each connector's
// decline map reads its processor's codes as these (the processor's own code is kept beside, as
// `processorErrorCode`), and payments/machine/retry.ts decides from `retry` here, so the same decline gets the same
// decision at every processor (Hyperswitch's gateway status map is the model).

/**
 * Whether a payment declined with the code may be sent on to the next processor of its routing:
 * - `processor_error`: the processor or the network failed, not the card: yes;
 * - `soft`: the decline is about this processor or this moment, another may approve: yes;
 * - `opt_in`: the issuer declined without a reason another processor would change: only when the profile lists the
 *   code (`retryableDeclineCodes`);
 * - `hard`: another processor would get the same answer, or must not be asked (fraud, a lost or stolen card, the
 *   customer's account): never, and a profile cannot list it.
 */
export type DeclineRetry = 'processor_error' | 'soft' | 'opt_in' | 'hard';

export interface DeclineEntry {
  meaning: string;
  retry: DeclineRetry;
}

export const DECLINE_CATALOG = {
  processing_error: { meaning: 'The processor, the acquirer or the network failed to process the payment.', retry: 'processor_error' },
  issuer_unavailable: { meaning: "The card's issuer could not be reached.", retry: 'soft' },
  card_not_supported: { meaning: 'The processor does not take this card or this kind of payment.', retry: 'soft' },
  currency_not_supported: { meaning: 'The processor does not take this currency (for this card).', retry: 'soft' },
  authentication_required: { meaning: 'The issuer asks for 3D Secure authentication, which the payment was sent without.', retry: 'soft' },
  card_declined: { meaning: 'The issuer declined without a specific reason (a generic decline, do not honor, a referral).', retry: 'opt_in' },
  unknown_decline: { meaning: "The processor declined with a code no decline map knows (the processor's own code is kept beside).", retry: 'opt_in' },
  invalid_amount: { meaning: 'The amount is out of range for the card or the processor.', retry: 'opt_in' },
  transaction_not_allowed: { meaning: 'The card may not be used for this kind of payment.', retry: 'opt_in' },
  card_velocity_exceeded: { meaning: "The card's limit on amount or number of payments was reached.", retry: 'opt_in' },
  incorrect_address: { meaning: "The billing address does not match the issuer's (AVS).", retry: 'opt_in' },
  incorrect_pin: { meaning: 'The PIN entered is wrong.', retry: 'opt_in' },
  pin_tries_exceeded: { meaning: 'Too many wrong PINs were entered.', retry: 'opt_in' },
  online_pin_required: { meaning: 'The issuer asks for the PIN, online or on a mobile device.', retry: 'opt_in' },
  invalid_account: { meaning: 'The card has no account of the kind the payment asked for (checking, savings).', retry: 'opt_in' },
  customer_cancelled: { meaning: 'The customer cancelled the payment at the processor.', retry: 'opt_in' },
  wallet_declined: { meaning: 'The customer declined the payment in the wallet.', retry: 'opt_in' },
  bank_authorization_failed: { meaning: 'The customer did not authorize the payment at their bank.', retry: 'opt_in' },
  transfer_expired: { meaning: "The bank transfer's funds did not arrive in time.", retry: 'opt_in' },
  insufficient_funds: { meaning: 'The card or account lacks the funds for the amount.', retry: 'hard' },
  expired_card: { meaning: 'The card has expired.', retry: 'hard' },
  incorrect_cvc: { meaning: "The card's security code is wrong.", retry: 'hard' },
  invalid_number: { meaning: 'The card number is wrong.', retry: 'hard' },
  invalid_expiry_date: { meaning: "The card's expiry month or year is not valid.", retry: 'hard' },
  lost_card: { meaning: 'The card was reported lost.', retry: 'hard' },
  stolen_card: { meaning: 'The card was reported stolen.', retry: 'hard' },
  pickup_card: { meaning: 'The issuer asks for the card to be kept (blocked, maybe lost or stolen).', retry: 'hard' },
  restricted_card: { meaning: 'The issuer restricted the card (maybe reported lost or stolen).', retry: 'hard' },
  fraudulent: { meaning: 'The issuer, the acquirer or the processor suspects fraud.', retry: 'hard' },
  authentication_failed: { meaning: 'The customer failed 3D Secure authentication.', retry: 'hard' },
  account_closed: { meaning: 'The card or bank account is closed.', retry: 'hard' },
  revocation_of_authorization: { meaning: "The cardholder revoked the merchant's authorization to charge the card (a stop payment).", retry: 'hard' },
  do_not_try_again: { meaning: 'The issuer or the processor says the card must not be tried again.', retry: 'hard' },
  duplicate_transaction: { meaning: 'A payment with the same amount and card was just made: another would charge the customer twice.', retry: 'hard' },
} as const satisfies Record<string, DeclineEntry>;

export type DeclineCode = keyof typeof DECLINE_CATALOG;

export const DECLINE_CODES = Object.keys(DECLINE_CATALOG) as DeclineCode[];

/**
 * What a processor's code no map has a row for reads as: a decline of its own, not sent on unless a profile names it
 * (a code the profile opted in for, such as card_declined, must not carry unknown ones along: one may say the card was
 * just charged). Not hard either: a manual retry with the same card stays possible.
 */
export const UNKNOWN_DECLINE: DeclineCode = 'unknown_decline';

export const isDeclineCode = (code: string): code is DeclineCode => Object.hasOwn(DECLINE_CATALOG, code);

/** The retry class of a payment's error code; a code outside the catalog is handled as an unknown decline. */
export const declineRetryOf = (code: string): DeclineRetry => DECLINE_CATALOG[isDeclineCode(code) ? code : UNKNOWN_DECLINE].retry;

/** The codes of one retry class. */
export const declineCodesOf = (retry: DeclineRetry): DeclineCode[] => DECLINE_CODES.filter((code) => DECLINE_CATALOG[code].retry === retry);
