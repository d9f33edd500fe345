// How the sandbox's failures read as ours. Its decline codes (a failed payment's error code: insufficient_funds,
// stolen_card, ...) are the decline catalog's (src/kernel/declines.ts), the sandbox being built to send them: they
// pass through as they are, and the catalog, not the sandbox's own `retryable`, says whether another processor may
// be tried. What is mapped here is the rest: a code outside the catalog, the one decline that changes the payment's
// status, and which HTTP refusals prove that a request changed nothing.
import { isDeclineCode, UNKNOWN_DECLINE } from '../../../kernel/declines.ts';
import { maskCardNumbers, processorErrorBody } from '../../../kernel/processor-error-body.ts';
import { ConnectorError, type PaymentError } from '../port.ts';
import { sandboxErrorSchema, type SandboxPayment } from './wire.ts';

/**
 * A failed payment's error: the sandbox's code when the catalog has it, else the catalog's unknown decline; the
 * sandbox's code kept beside, and its error object.
 */
export const paymentErrorOf = (error: NonNullable<SandboxPayment['error']>): PaymentError => ({
  code: isDeclineCode(error.code) ? error.code : UNKNOWN_DECLINE,
  processorCode: error.code,
  message: maskCardNumbers(error.message),
  processorBody: processorErrorBody(error),
});

/** The decline of a customer who failed 3DS: the payment's status is then authentication_failed, not failed. */
export const AUTHENTICATION_FAILED = 'authentication_failed';

/** HTTP statuses that, with the sandbox's error body, say the request changed nothing, and whose fault it was. */
const DEFINITE_REFUSALS: Readonly<Partial<Record<number, 'rejected' | 'unauthorized'>>> = {
  400: 'rejected',
  401: 'unauthorized',
  403: 'unauthorized',
  404: 'rejected',
};

/** A refusal with `code` under `status` that said the request changed nothing (409 only for the wrong state). */
function definiteRefusal(status: number, code: string): 'rejected' | 'unauthorized' | null {
  if (status === 409) return code === 'invalid_state' ? 'rejected' : null;
  return DEFINITE_REFUSALS[status] ?? null;
}

/**
 * A well-formed refusal (bad input, bad credentials, unknown payment, wrong state) means nothing was
 * done. Anything else (an idempotency conflict, throttling, a server error, a body we cannot read) may
 * hide a change, so the outcome is unknown.
 */
export function refusalOf(processor: string, status: number, payload: unknown, what: string): ConnectorError {
  const error = sandboxErrorSchema.safeParse(payload).data?.error;
  const kind = error === undefined ? null : definiteRefusal(status, error.code);
  if (error !== undefined && kind !== null) {
    // Its refusals of a card (a wrong number) carry the catalog's codes, as its declines do.
    const declineCode = isDeclineCode(error.code) ? error.code : undefined;
    return new ConnectorError(`${processor} rejected ${what}: ${error.message}`, kind, false, { processorCode: error.code, declineCode, body: payload });
  }
  return new ConnectorError(`${processor} answered HTTP ${status}${error ? ` (${error.code})` : ''}`, 'server_error', true, {
    processorCode: error?.code,
    body: payload,
    httpStatus: status,
  });
}

/** Only the processor's own "no such payment" proves there is none (a 404 from a wrong URL does not). */
export const provesNoneExists = (status: number, payload: unknown): boolean =>
  status === 404 && sandboxErrorSchema.safeParse(payload).data?.error.code === 'resource_missing';
