// How Stripe's failures read as ours. A declined card's `decline_code` (or, without one, its `code`) maps to
// our decline catalog, the one the sandbox sends and payments/machine/retry.ts decides on: its HARD_DECLINE_CODES
// are never sent to another processor, and `retryable` here says whether a soft decline may be. Stripe's own codes
// stay in the message, so the payment shows both. Refused requests map to a ConnectorError that says whether
// Stripe may have acted.
import { ConnectorError } from '../port.ts';
import type { StripeError } from './wire.ts';

/** Stripe's decline and error codes (docs.stripe.com/declines/codes, docs.stripe.com/error-codes) as ours. */
export const DECLINE_CODES: Readonly<Record<string, { code: string; retryable: boolean }>> = {
  generic_decline: { code: 'card_declined', retryable: true },
  card_declined: { code: 'card_declined', retryable: true },
  do_not_honor: { code: 'card_declined', retryable: true },
  try_again_later: { code: 'processing_error', retryable: true },
  processing_error: { code: 'processing_error', retryable: true },
  issuer_not_available: { code: 'processing_error', retryable: true },
  card_not_supported: { code: 'card_not_supported', retryable: true },
  currency_not_supported: { code: 'currency_not_supported', retryable: true },
  insufficient_funds: { code: 'insufficient_funds', retryable: false },
  expired_card: { code: 'expired_card', retryable: false },
  incorrect_cvc: { code: 'incorrect_cvc', retryable: false },
  invalid_cvc: { code: 'incorrect_cvc', retryable: false },
  incorrect_number: { code: 'invalid_number', retryable: false },
  invalid_number: { code: 'invalid_number', retryable: false },
  lost_card: { code: 'lost_card', retryable: false },
  stolen_card: { code: 'stolen_card', retryable: false },
  pickup_card: { code: 'pickup_card', retryable: false },
  fraudulent: { code: 'fraudulent', retryable: false },
  merchant_blacklist: { code: 'fraudulent', retryable: false },
  payment_intent_authentication_failure: { code: 'authentication_failed', retryable: false },
};

/** What a decline Stripe has no entry for reads as: a decline, not sent on (a wrong guess must not charge twice). */
const UNKNOWN_DECLINE = { code: 'card_declined', retryable: false };

/** A failed payment's error: our code and retry decision, Stripe's codes kept in the message. */
export function declineOf(error: StripeError): { code: string; message: string; retryable: boolean } {
  const stripeCodes = [error.code, error.decline_code].filter((code) => code != null);
  // A decline_code we have no entry for is unknown, whatever its code says: card_declined is retryable only as
  // Stripe's generic answer, and do_not_try_again, restricted_card, … come with that same code.
  const mapped = (error.decline_code != null ? DECLINE_CODES[error.decline_code] : DECLINE_CODES[error.code ?? '']) ?? UNKNOWN_DECLINE;
  const message = `${error.message ?? 'The payment failed.'} (stripe: ${stripeCodes.join('/') || error.type})`;
  return { ...mapped, message };
}

/** What this file reads of the errors Stripe's library throws: their class name is their `type`. */
interface LibraryError {
  type: string;
  message: string;
  statusCode?: number;
  code?: string;
  detail?: unknown;
}

const isLibraryError = (error: unknown): error is LibraryError => {
  const type = error instanceof Error ? (error as { type?: unknown }).type : undefined;
  return typeof type === 'string' && type.startsWith('Stripe');
};

/**
 * A request the library could not complete as an answer. Stripe's 400, 401, 403 and 404 say nothing was done;
 * a timeout, a 5xx, a rate limit or an idempotency conflict may hide a change, so the outcome is unknown.
 */
export function connectorErrorOf(error: unknown, timeoutMs: number): ConnectorError {
  if (!isLibraryError(error)) return new ConnectorError(`stripe: ${(error as Error).message}`, 'bad_response', true);
  const code = error.code ?? undefined;
  switch (error.type) {
    case 'StripeConnectionError': {
      const cause = (error.detail as { code?: string } | undefined)?.code;
      if (cause === 'ETIMEDOUT') return new ConnectorError(`stripe did not answer within ${timeoutMs} ms`, 'timeout', true);
      if (cause === 'ECONNREFUSED') return new ConnectorError('stripe refused the connection', 'unreachable', false);
      return new ConnectorError(`stripe request failed: ${error.message}`, 'unreachable', true);
    }
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return new ConnectorError(`stripe refused the credentials: ${error.message}`, 'unauthorized', false, code);
    case 'StripeInvalidRequestError':
    case 'StripeCardError':
      return new ConnectorError(`stripe rejected the request: ${error.message}`, 'rejected', false, code);
    default:
      return new ConnectorError(`stripe answered HTTP ${error.statusCode ?? '?'} (${error.type}${code ? `: ${code}` : ''})`, 'server_error', true, code);
  }
}
