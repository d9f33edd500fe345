// How Adyen's failures read as ours. A refused payment's refusalReasonCode (Adyen's catalog, docs/connectors/adyen.md)
// becomes one of our decline codes, the ones payments/machine/retry.ts knows as hard, with whether another
// processor may be tried; Adyen's own code and reason stay in the message. An HTTP error is a ConnectorError
// saying whether the request certainly did nothing.
import { ConnectorError } from '../port.ts';
import { adyenErrorSchema } from './wire.ts';

export interface Decline {
  /** Our decline code. */
  code: string;
  /** Whether another processor may be tried (a soft decline or a processor error). */
  retryable: boolean;
}

/** Adyen's refusalReasonCode → our decline. Codes not here are card_declined, not retryable. */
export const REFUSAL_REASONS: Readonly<Record<string, { reason: string } & Decline>> = {
  '0': { reason: 'Unknown', code: 'processing_error', retryable: true },
  '2': { reason: 'Refused', code: 'card_declined', retryable: false },
  '3': { reason: 'Referral', code: 'card_declined', retryable: false },
  '4': { reason: 'Acquirer Error', code: 'processing_error', retryable: true },
  '5': { reason: 'Blocked Card', code: 'pickup_card', retryable: false },
  '6': { reason: 'Expired Card', code: 'expired_card', retryable: false },
  '7': { reason: 'Invalid Amount', code: 'invalid_amount', retryable: false },
  '8': { reason: 'Invalid Card Number', code: 'invalid_number', retryable: false },
  '9': { reason: 'Issuer Unavailable', code: 'issuer_unavailable', retryable: true },
  '10': { reason: 'Not supported', code: 'card_not_supported', retryable: true },
  '11': { reason: '3D Not Authenticated', code: 'authentication_failed', retryable: false },
  '12': { reason: 'Not enough balance', code: 'insufficient_funds', retryable: false },
  '14': { reason: 'Acquirer Fraud', code: 'fraudulent', retryable: false },
  '15': { reason: 'Cancelled', code: 'card_declined', retryable: false },
  '16': { reason: 'Shopper Cancelled', code: 'customer_cancelled', retryable: false },
  '17': { reason: 'Invalid Pin', code: 'incorrect_pin', retryable: false },
  '18': { reason: 'Pin tries exceeded', code: 'pin_tries_exceeded', retryable: false },
  '19': { reason: 'Pin validation not possible', code: 'processing_error', retryable: true },
  '20': { reason: 'FRAUD', code: 'fraudulent', retryable: false },
  '21': { reason: 'Not Submitted', code: 'processing_error', retryable: true },
  '22': { reason: 'FRAUD-CANCELLED', code: 'fraudulent', retryable: false },
  '23': { reason: 'Transaction Not Permitted', code: 'transaction_not_allowed', retryable: false },
  '24': { reason: 'CVC Declined', code: 'incorrect_cvc', retryable: false },
  '25': { reason: 'Restricted Card', code: 'restricted_card', retryable: false },
  '26': { reason: 'Revocation Of Auth', code: 'revocation_of_authorization', retryable: false },
  '27': { reason: 'Declined Non Generic', code: 'card_declined', retryable: false },
  '28': { reason: 'Withdrawal amount exceeded', code: 'card_velocity_exceeded', retryable: false },
  '29': { reason: 'Withdrawal count exceeded', code: 'card_velocity_exceeded', retryable: false },
  '31': { reason: 'Issuer Suspected Fraud', code: 'fraudulent', retryable: false },
  '32': { reason: 'AVS Declined', code: 'incorrect_address', retryable: false },
  '33': { reason: 'Card requires online pin', code: 'online_pin_required', retryable: false },
  '34': { reason: 'No checking account available on Card', code: 'invalid_account', retryable: false },
  '35': { reason: 'No savings account available on Card', code: 'invalid_account', retryable: false },
  '36': { reason: 'Mobile pin required', code: 'online_pin_required', retryable: false },
  '37': { reason: 'Contactless fallback', code: 'card_declined', retryable: false },
  '38': { reason: 'Authentication required', code: 'authentication_required', retryable: true },
  '39': { reason: 'RReq not received from DS', code: 'authentication_failed', retryable: false },
  '42': { reason: '3DS Authentication Error', code: 'authentication_failed', retryable: false },
  '46': { reason: 'Transaction blocked by Adyen to prevent excessive retry fees', code: 'do_not_try_again', retryable: false },
};

const UNLISTED: Decline = { code: 'card_declined', retryable: false };

/** Our decline of a refusal, by Adyen's code or (a notification carries only the text) its reason. */
export function declineOf(refusalReasonCode: string | undefined, refusalReason: string | undefined): Decline {
  const byCode = refusalReasonCode === undefined ? undefined : REFUSAL_REASONS[refusalReasonCode];
  const byReason = Object.values(REFUSAL_REASONS).find((row) => row.reason.toLowerCase() === refusalReason?.toLowerCase());
  const { code, retryable } = byCode ?? byReason ?? UNLISTED;
  return { code, retryable };
}

/** The payment's error: our code, Adyen's own code and reason in the message (a payment shows both). */
export function paymentErrorOf(refusalReasonCode: string | undefined, refusalReason: string | undefined) {
  const decline = declineOf(refusalReasonCode, refusalReason);
  const adyen = `Adyen refusalReasonCode ${refusalReasonCode ?? 'none'}`;
  return { ...decline, message: `${refusalReason ?? 'Refused'} (${adyen})` };
}

/** A processing error (resultCode Error): Adyen failed, so another processor may be tried. */
export const ADYEN_ERROR: Decline = { code: 'processing_error', retryable: true };

/**
 * An HTTP error as a ConnectorError. Adyen's 4xx (validation, a wrong state, an unknown pspReference) did
 * nothing; 401 and 403 refused our credentials; anything else (a 5xx, a body we cannot read) may hide a change.
 */
export function refusalOf(status: number, payload: unknown, what: string): ConnectorError {
  const error = adyenErrorSchema.safeParse(payload).data;
  const detail = error ? `${error.message} (${error.errorCode})` : `HTTP ${status}`;
  if (error && (status === 401 || status === 403))
    return new ConnectorError(`Adyen refused the credentials for ${what}: ${detail}`, 'unauthorized', false, error.errorCode);
  // 704: the same Idempotency-Key is still being processed or was processed (Adyen answers it with 409 or 422),
  // so the first request may have acted.
  if (error && status >= 400 && status < 500 && status !== 429 && status !== 409 && error.errorCode !== '704')
    return new ConnectorError(`Adyen rejected ${what}: ${detail}`, 'rejected', false, error.errorCode);
  return new ConnectorError(`Adyen answered ${what} with ${detail}`, 'server_error', true, error?.errorCode);
}

/** Adyen has no API to read a payment or a refund: their outcome comes in notifications only. */
export const noStatusApi = (what: string) =>
  new ConnectorError(`Adyen has no API to read ${what}; its notifications keep it up to date`, 'rejected', false, 'no_status_api');
