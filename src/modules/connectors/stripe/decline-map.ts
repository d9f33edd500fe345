// How Stripe's failures read as ours. A declined card's `decline_code` (or, without one, its `code`) maps to a code of
// the decline catalog (src/kernel/declines.ts), which says whether another processor may be tried; Stripe's own code
// is kept beside it (and in the message), so the payment shows both. Refused requests map to a ConnectorError that
// says whether Stripe may have acted.
import { UNKNOWN_DECLINE, type DeclineCode } from '../../../kernel/declines.ts';
import { maskCardNumbers, processorErrorBody } from '../../../kernel/processor-error-body.ts';
import { ConnectorError, type PaymentError } from '../port.ts';
import { stripeErrorSchema, type StripeError } from './wire.ts';

/** Stripe's decline and error codes (docs.stripe.com/declines/codes, docs.stripe.com/error-codes) as the catalog's. */
export const DECLINE_CODES: Readonly<Record<string, DeclineCode>> = {
  generic_decline: 'card_declined',
  card_declined: 'card_declined',
  do_not_honor: 'card_declined',
  call_issuer: 'card_declined',
  no_action_taken: 'card_declined',
  try_again_later: 'processing_error',
  processing_error: 'processing_error',
  reenter_transaction: 'processing_error',
  issuer_not_available: 'issuer_unavailable',
  card_not_supported: 'card_not_supported',
  currency_not_supported: 'currency_not_supported',
  authentication_required: 'authentication_required',
  invalid_amount: 'invalid_amount',
  not_permitted: 'transaction_not_allowed',
  service_not_allowed: 'transaction_not_allowed',
  transaction_not_allowed: 'transaction_not_allowed',
  card_velocity_exceeded: 'card_velocity_exceeded',
  withdrawal_count_limit_exceeded: 'card_velocity_exceeded',
  incorrect_zip: 'incorrect_address',
  incorrect_pin: 'incorrect_pin',
  invalid_pin: 'incorrect_pin',
  pin_try_exceeded: 'pin_tries_exceeded',
  offline_pin_required: 'online_pin_required',
  online_or_offline_pin_required: 'online_pin_required',
  invalid_account: 'invalid_account',
  insufficient_funds: 'insufficient_funds',
  expired_card: 'expired_card',
  incorrect_cvc: 'incorrect_cvc',
  invalid_cvc: 'incorrect_cvc',
  incorrect_number: 'invalid_number',
  invalid_number: 'invalid_number',
  invalid_expiry_month: 'invalid_expiry_date',
  invalid_expiry_year: 'invalid_expiry_date',
  lost_card: 'lost_card',
  stolen_card: 'stolen_card',
  pickup_card: 'pickup_card',
  restricted_card: 'restricted_card',
  security_violation: 'restricted_card',
  fraudulent: 'fraudulent',
  merchant_blacklist: 'fraudulent',
  payment_intent_authentication_failure: 'authentication_failed',
  revocation_of_authorization: 'revocation_of_authorization',
  revocation_of_all_authorizations: 'revocation_of_authorization',
  stop_payment_order: 'revocation_of_authorization',
  do_not_try_again: 'do_not_try_again',
  // Stripe's "too many declines of this card lately, try in 24 hours": another processor must not be asked either.
  card_decline_rate_limit_exceeded: 'do_not_try_again',
  duplicate_transaction: 'duplicate_transaction',
};

/** A failed payment's error: the catalog's code, Stripe's own (its decline_code, else its code), both in the message too, and its error object. */
export function declineOf(error: StripeError): PaymentError {
  const stripeCodes = [error.code, error.decline_code].filter((code) => code != null && code !== '');
  // A decline_code we have no entry for is unknown, whatever its code says: Stripe sends its generic card_declined
  // code with every decline_code, the ones we have no row for too.
  const stripeCode = error.decline_code || error.code || null;
  const code = (stripeCode !== null && Object.hasOwn(DECLINE_CODES, stripeCode) ? DECLINE_CODES[stripeCode] : undefined) ?? UNKNOWN_DECLINE;
  const message = maskCardNumbers(`${error.message ?? 'The payment failed.'} (stripe: ${stripeCodes.join('/') || error.type})`);
  return { code, processorCode: stripeCode, message, processorBody: processorErrorBody(error) };
}

/** What this file reads of the errors Stripe's library throws: their class name is their `type`. */
interface LibraryError {
  type: string;
  message: string;
  statusCode?: number;
  code?: string;
  detail?: unknown;
  /** Stripe's error object, to which the library adds the response's headers, statusCode and requestId. */
  raw?: unknown;
}

/** The error object as Stripe sent it: the library's `raw` without what the library added to it. */
function sentBody(error: LibraryError): unknown {
  if (typeof error.raw !== 'object' || error.raw === null) return undefined;
  const { headers, statusCode, requestId, ...sent } = error.raw as Record<string, unknown>;
  return sent;
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
  const body = sentBody(error);
  switch (error.type) {
    case 'StripeConnectionError': {
      const cause = (error.detail as { code?: string } | undefined)?.code;
      if (cause === 'ETIMEDOUT') return new ConnectorError(`stripe did not answer within ${timeoutMs} ms`, 'timeout', true);
      if (cause === 'ECONNREFUSED') return new ConnectorError('stripe refused the connection', 'unreachable', false);
      return new ConnectorError(`stripe request failed: ${error.message}`, 'unreachable', true);
    }
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return new ConnectorError(`stripe refused the credentials: ${error.message}`, 'unauthorized', false, { processorCode: code, body });
    case 'StripeCardError': {
      // A card error without a PaymentIntent (one with it is an answer, connector.ts): Stripe refused the card's
      // details before any payment existed (incorrect_number, invalid_expiry_year), a decline read by the same map.
      const decline = declineOf(stripeErrorSchema.safeParse(body).data ?? { type: 'card_error', code, message: error.message });
      return new ConnectorError(`stripe declined the card: ${decline.message}`, 'rejected', false, {
        processorCode: decline.processorCode ?? code,
        declineCode: decline.code,
        body,
      });
    }
    case 'StripeInvalidRequestError':
      return new ConnectorError(`stripe rejected the request: ${error.message}`, 'rejected', false, { processorCode: code, body });
    default:
      return new ConnectorError(`stripe answered HTTP ${error.statusCode ?? '?'} (${error.type}${code ? `: ${code}` : ''})`, 'server_error', true, {
        processorCode: code,
        body,
        httpStatus: error.statusCode,
      });
  }
}
