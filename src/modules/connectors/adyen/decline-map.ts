// How Adyen's failures read as ours. A refused payment's refusalReasonCode (Adyen's catalog, docs/connectors/adyen.md)
// becomes a code of the decline catalog (src/kernel/declines.ts), which says whether another processor may be tried;
// Adyen's own code is kept beside it, and its reason in the message. An HTTP error is a ConnectorError saying whether
// the request certainly did nothing.
import { UNKNOWN_DECLINE, type DeclineCode } from '../../../kernel/declines.ts';
import { maskCardNumbers, processorErrorBody } from '../../../kernel/processor-error-body.ts';
import { ConnectorError, type PaymentError } from '../port.ts';
import { adyenErrorSchema } from './wire.ts';

/** Adyen's refusalReasonCode → the catalog's code. Codes not here are the catalog's unknown decline. */
export const REFUSAL_REASONS: Readonly<Record<string, { reason: string; code: DeclineCode }>> = {
  '0': { reason: 'Unknown', code: 'processing_error' },
  '2': { reason: 'Refused', code: 'card_declined' },
  '3': { reason: 'Referral', code: 'card_declined' },
  '4': { reason: 'Acquirer Error', code: 'processing_error' },
  '5': { reason: 'Blocked Card', code: 'pickup_card' },
  '6': { reason: 'Expired Card', code: 'expired_card' },
  '7': { reason: 'Invalid Amount', code: 'invalid_amount' },
  '8': { reason: 'Invalid Card Number', code: 'invalid_number' },
  '9': { reason: 'Issuer Unavailable', code: 'issuer_unavailable' },
  '10': { reason: 'Not supported', code: 'card_not_supported' },
  '11': { reason: '3D Not Authenticated', code: 'authentication_failed' },
  '12': { reason: 'Not enough balance', code: 'insufficient_funds' },
  '14': { reason: 'Acquirer Fraud', code: 'fraudulent' },
  '15': { reason: 'Cancelled', code: 'card_declined' },
  '16': { reason: 'Shopper Cancelled', code: 'customer_cancelled' },
  '17': { reason: 'Invalid Pin', code: 'incorrect_pin' },
  '18': { reason: 'Pin tries exceeded', code: 'pin_tries_exceeded' },
  '19': { reason: 'Pin validation not possible', code: 'processing_error' },
  '20': { reason: 'FRAUD', code: 'fraudulent' },
  '21': { reason: 'Not Submitted', code: 'processing_error' },
  '22': { reason: 'FRAUD-CANCELLED', code: 'fraudulent' },
  '23': { reason: 'Transaction Not Permitted', code: 'transaction_not_allowed' },
  '24': { reason: 'CVC Declined', code: 'incorrect_cvc' },
  '25': { reason: 'Restricted Card', code: 'restricted_card' },
  '26': { reason: 'Revocation Of Auth', code: 'revocation_of_authorization' },
  '27': { reason: 'Declined Non Generic', code: 'card_declined' },
  '28': { reason: 'Withdrawal amount exceeded', code: 'card_velocity_exceeded' },
  '29': { reason: 'Withdrawal count exceeded', code: 'card_velocity_exceeded' },
  '31': { reason: 'Issuer Suspected Fraud', code: 'fraudulent' },
  '32': { reason: 'AVS Declined', code: 'incorrect_address' },
  '33': { reason: 'Card requires online pin', code: 'online_pin_required' },
  '34': { reason: 'No checking account available on Card', code: 'invalid_account' },
  '35': { reason: 'No savings account available on Card', code: 'invalid_account' },
  '36': { reason: 'Mobile pin required', code: 'online_pin_required' },
  '37': { reason: 'Contactless fallback', code: 'card_declined' },
  '38': { reason: 'Authentication required', code: 'authentication_required' },
  '39': { reason: 'RReq not received from DS', code: 'authentication_failed' },
  '42': { reason: '3DS Authentication Error', code: 'authentication_failed' },
  '46': { reason: 'Transaction blocked by Adyen to prevent excessive retry fees', code: 'do_not_try_again' },
};

const rowOf = (refusalReasonCode: string | undefined) =>
  refusalReasonCode !== undefined && Object.hasOwn(REFUSAL_REASONS, refusalReasonCode) ? REFUSAL_REASONS[refusalReasonCode] : undefined;

/** Adyen's code of a refusal: its refusalReasonCode or, when it has none we know (a notification carries only the text), its reason's. */
function adyenCodeOf(refusalReasonCode: string | undefined, refusalReason: string | undefined): string | undefined {
  if (rowOf(refusalReasonCode) !== undefined) return refusalReasonCode;
  const byReason = Object.entries(REFUSAL_REASONS).find(([, row]) => row.reason.toLowerCase() === refusalReason?.toLowerCase());
  return byReason?.[0] ?? refusalReasonCode;
}

/** The catalog's code of a refusal, by Adyen's code or its reason. */
export const declineOf = (refusalReasonCode: string | undefined, refusalReason: string | undefined): DeclineCode =>
  rowOf(adyenCodeOf(refusalReasonCode, refusalReason))?.code ?? UNKNOWN_DECLINE;

/**
 * The payment's error: the catalog's code, Adyen's own code beside it and its reason in the message (a payment shows
 * both), and `body`, what Adyen sent about it (the /payments answer, or the notification item).
 */
export function paymentErrorOf(refusalReasonCode: string | undefined, refusalReason: string | undefined, body: unknown): PaymentError {
  const adyenCode = adyenCodeOf(refusalReasonCode, refusalReason);
  const message = maskCardNumbers(`${refusalReason ?? 'Refused'} (Adyen refusalReasonCode ${refusalReasonCode ?? 'none'})`);
  return { code: declineOf(refusalReasonCode, refusalReason), processorCode: adyenCode ?? null, message, processorBody: processorErrorBody(body) };
}

/** A processing error (resultCode Error): Adyen failed, so another processor may be tried. */
export const processingErrorOf = (refusalReason: string | undefined, body: unknown): PaymentError => ({
  code: 'processing_error',
  processorCode: null,
  message: maskCardNumbers(`${refusalReason ?? 'Error'} (Adyen resultCode Error)`),
  processorBody: processorErrorBody(body),
});

/**
 * Adyen's validation errorCodes about the card's details (docs.adyen.com/development-resources/error-codes), which it
 * answers with HTTP 422 before any payment exists, as the catalog's codes: a refusal that is a decline.
 */
export const CARD_VALIDATION_ERRORS: Readonly<Record<string, DeclineCode>> = {
  '101': 'invalid_number', // Invalid card number
  '103': 'incorrect_cvc', // CVC is not the right length
  '129': 'invalid_expiry_date', // Expiry Date Invalid
  '140': 'invalid_expiry_date', // Invalid expiryMonth[1..12] / expiryYear>2000, or before now
};

const cardValidationDecline = (errorCode: string): DeclineCode | undefined =>
  Object.hasOwn(CARD_VALIDATION_ERRORS, errorCode) ? CARD_VALIDATION_ERRORS[errorCode] : undefined;

/**
 * An HTTP error as a ConnectorError, with Adyen's body (status, errorCode, message, errorType, pspReference). Adyen's
 * 4xx (validation, a wrong state, an unknown pspReference) did nothing; 401 and 403 refused our credentials; anything
 * else (a 5xx, a body we cannot read) may hide a change.
 */
export function refusalOf(status: number, payload: unknown, what: string): ConnectorError {
  const error = adyenErrorSchema.safeParse(payload).data;
  const detail = error ? `${error.message} (${error.errorCode})` : `HTTP ${status}`;
  if (error && (status === 401 || status === 403))
    return new ConnectorError(`Adyen refused the credentials for ${what}: ${detail}`, 'unauthorized', false, { processorCode: error.errorCode, body: payload });
  // 704: the same Idempotency-Key is still being processed or was processed (Adyen answers it with 409 or 422),
  // so the first request may have acted.
  if (error && status >= 400 && status < 500 && status !== 429 && status !== 409 && error.errorCode !== '704')
    return new ConnectorError(`Adyen rejected ${what}: ${detail}`, 'rejected', false, {
      processorCode: error.errorCode,
      declineCode: cardValidationDecline(error.errorCode),
      body: payload,
    });
  return new ConnectorError(`Adyen answered ${what} with ${detail}`, 'server_error', true, {
    processorCode: error?.errorCode,
    body: payload,
    httpStatus: status,
  });
}

/** Adyen has no API to read a payment or a refund: their outcome comes in notifications only. */
export const noStatusApi = (what: string) =>
  new ConnectorError(`Adyen has no API to read ${what}; its notifications keep it up to date`, 'rejected', false, { processorCode: 'no_status_api' });
