// The error catalog of the public API (docs/api.md, "Errors"). Services throw AppError; the GraphQL and
// REST layers turn it into `extensions.code` / an HTTP status. Anything else that escapes is INTERNAL and masked.

export const ERROR_CODES = {
  UNAUTHENTICATED: { httpStatus: 401, description: 'No key, an unknown key, or a revoked or expired key.' },
  FORBIDDEN: { httpStatus: 403, description: 'The key is valid but may not do this.' },
  NOT_FOUND: { httpStatus: 404, description: 'No such resource for this merchant and mode.' },
  INVALID_INPUT: { httpStatus: 400, description: 'A field breaks a rule; `extensions.field` names it.' },
  INVALID_STATE: { httpStatus: 409, description: 'The resource is in a state that forbids the operation; `extensions.status` names it.' },
  CONFLICT: { httpStatus: 409, description: 'A concurrent request holds the resource (or the same idempotency key); retry.' },
  INSUFFICIENT_BALANCE: {
    httpStatus: 409,
    description:
      "A payout or refund would take more than a platform member's available balance (docs/ledger.md); `extensions.merchantId`, `currency`, `available` and `needed` say whose and by how much.",
  },
  IDEMPOTENCY_MISMATCH: { httpStatus: 422, description: 'The Idempotency-Key was used with a different request.' },
  RATE_LIMITED: { httpStatus: 429, description: 'Too many requests; retry after the indicated time.' },
  CONNECTOR_ERROR: { httpStatus: 502, description: 'The processor failed or could not be reached.' },
  WEBHOOKS_NOT_SUPPORTED: { httpStatus: 501, description: 'The connector sends no callbacks; its payments are kept up to date by sync.' },
  PAYMENT_DECLINED: {
    httpStatus: 402,
    description:
      "The processor declined; `extensions.declineCode` (the decline catalog's code, docs/declines.md), `processorCode` (the processor's own) and `declineMessage` carry its answer.",
  },
  PAYLOAD_TOO_LARGE: { httpStatus: 413, description: 'The request body is larger than MAX_BODY_BYTES.' },
  QUERY_TOO_COMPLEX: { httpStatus: 400, description: 'The operation is deeper, costlier or longer than the limits.' },
  SERVICE_UNAVAILABLE: { httpStatus: 503, description: 'PostgreSQL or Redis cannot be reached; retry later.' },
  INTERNAL: { httpStatus: 500, description: 'An unexpected error; it is logged with the request id, never shown.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetails {
  /** The input field that broke a rule, dotted from the input object ("webhookUrl", "card.number"). */
  field?: string;
  /** The resource's current status, for INVALID_STATE. */
  status?: string;
  [key: string]: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

/** The HTTP headers an error's answer carries, over REST and GraphQL alike: Retry-After (seconds) on a rate limit. */
export function headersOf(error: AppError): Record<string, string> {
  const seconds = error.details['retryAfterSeconds'];
  return typeof seconds === 'number' ? { 'retry-after': String(seconds) } : {};
}

/** The body of a REST error answer (docs/api.md, REST routes): the code, the message, and the field at fault if any. */
export function errorBody(code: string, message: string, field?: unknown) {
  return { error: { code, message, ...(field ? { field } : {}) } };
}

export const invalidInput = (field: string, message: string) => new AppError('INVALID_INPUT', `${field}: ${message}`, { field });
export const notFound = (what: string, id: string) => new AppError('NOT_FOUND', `No ${what} with id ${JSON.stringify(id)} exists for this merchant.`);
