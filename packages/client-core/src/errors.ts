// The API's errors as the SDKs raise them: `code` from the API's catalog (docs/api.md, "Errors"), one class
// per code a caller handles differently, so `catch (error) { if (error instanceof CardDeclinedError) … }`. Each
// names itself (`name`) in a string: the browser bundle is minified, which renames classes.

/** What the HTTP answer said beside the GraphQL error: its status and the request id the service logged it under. */
export interface ErrorContext {
  httpStatus?: number;
  /** The `x-request-id` response header (docs/api.md, "Operational routes"); quote it to the operator. */
  requestId?: string;
}

/** An error the API answered with: `code` is from the API's catalog (PAYMENT_DECLINED, INVALID_INPUT, ...). */
export class ApiError extends Error {
  readonly code: string;
  /** The input field at fault, for INVALID_INPUT (and INSUFFICIENT_BALANCE: `amount`). */
  readonly field: string | undefined;
  /** Every extension the API sent (declineCode, declineMessage, status, ...). */
  readonly extensions: Readonly<Record<string, unknown>>;
  /** The id the service logged the request under; undefined when no answer came (ConnectionError). */
  readonly requestId: string | undefined;
  /** The HTTP status of the answer; undefined over WebSocket or when no answer came. */
  readonly httpStatus: number | undefined;

  constructor(message: string, extensions: Record<string, unknown>, context: ErrorContext = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = typeof extensions['code'] === 'string' ? extensions['code'] : 'INTERNAL';
    this.field = typeof extensions['field'] === 'string' ? extensions['field'] : undefined;
    this.extensions = extensions;
    this.requestId = context.requestId ?? (typeof extensions['requestId'] === 'string' ? extensions['requestId'] : undefined);
    this.httpStatus = context.httpStatus;
  }
}

const stringExtension = (extensions: Readonly<Record<string, unknown>>, name: string): string | undefined => {
  const value = extensions[name];
  return typeof value === 'string' ? value : undefined;
};

/** How long a RATE_LIMITED answer asked to wait: the Retry-After header (the transport keeps it in extensions), else the extension. */
function secondsExtension(extensions: Readonly<Record<string, unknown>>): number | undefined {
  const value = extensions['retryAfterSeconds'];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** UNAUTHENTICATED: no key, an unknown key or a revoked one. */
export class AuthenticationError extends ApiError {
  override readonly name = 'AuthenticationError';
}
/** FORBIDDEN: the key is valid but may not do this. */
export class PermissionError extends ApiError {
  override readonly name = 'PermissionError';
}
/** NOT_FOUND: no such resource for this merchant and mode. */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
}
/** INVALID_INPUT: `field` names the input field and the message the rule it breaks. */
export class InvalidInputError extends ApiError {
  override readonly name = 'InvalidInputError';
}
/** INVALID_STATE: the resource's state forbids the operation; `status` names that state. */
export class InvalidStateError extends ApiError {
  override readonly name = 'InvalidStateError';
  readonly status: string | undefined = stringExtension(this.extensions, 'status');
}
/** CONFLICT: a concurrent request holds the resource (or still runs under the same idempotency key). */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError';
}
/** IDEMPOTENCY_MISMATCH: the idempotency key was used with a different request. */
export class IdempotencyError extends ApiError {
  override readonly name = 'IdempotencyError';
}
/** RATE_LIMITED: `retryAfterSeconds` says when to try again (the Retry-After header, or the extension). */
export class RateLimitError extends ApiError {
  override readonly name = 'RateLimitError';
  readonly retryAfterSeconds: number | undefined = secondsExtension(this.extensions);
}
/** PAYMENT_DECLINED: our code from the decline catalog (docs/declines.md), the processor's code and its message. */
export class CardDeclinedError extends ApiError {
  override readonly name = 'CardDeclinedError';
  readonly declineCode: string | undefined = stringExtension(this.extensions, 'declineCode');
  readonly processorCode: string | undefined = stringExtension(this.extensions, 'processorCode');
  readonly declineMessage: string | undefined = stringExtension(this.extensions, 'declineMessage');
}
/** CONNECTOR_ERROR: the processor failed, could not be reached, or refused our credentials. */
export class ConnectorError extends ApiError {
  override readonly name = 'ConnectorError';
}
/** SERVICE_UNAVAILABLE: the service's database or Redis is unreachable; retried automatically. */
export class ServiceUnavailableError extends ApiError {
  override readonly name = 'ServiceUnavailableError';
}
/** INSUFFICIENT_BALANCE: a payout or refund would take more than the available balance. */
export class InsufficientBalanceError extends ApiError {
  override readonly name = 'InsufficientBalanceError';
}
/** CONNECTION_ERROR: no answer came (the network failed or the timeout passed); the request may have run. */
export class ConnectionError extends ApiError {
  override readonly name = 'ConnectionError';
  /**
   * Set when a mutation's outcome is unknown (a try got no answer and none after it settled it): repeat the
   * call with this Idempotency-Key to get its outcome, never with a new one (docs/server-sdk.md).
   */
  readonly idempotencyKey: string | undefined;
  constructor(message: string, cause?: unknown, idempotencyKey?: string) {
    super(message, { code: 'CONNECTION_ERROR' });
    if (cause !== undefined) this.cause = cause;
    this.idempotencyKey = idempotencyKey;
  }
}

type ApiErrorClass = new (message: string, extensions: Record<string, unknown>, context?: ErrorContext) => ApiError;

/** The class of each code of docs/api.md's catalog that has one; any other code is a plain ApiError. */
export const ERROR_CLASSES: Readonly<Record<string, ApiErrorClass>> = {
  UNAUTHENTICATED: AuthenticationError,
  FORBIDDEN: PermissionError,
  NOT_FOUND: NotFoundError,
  INVALID_INPUT: InvalidInputError,
  INVALID_STATE: InvalidStateError,
  CONFLICT: ConflictError,
  IDEMPOTENCY_MISMATCH: IdempotencyError,
  RATE_LIMITED: RateLimitError,
  PAYMENT_DECLINED: CardDeclinedError,
  CONNECTOR_ERROR: ConnectorError,
  SERVICE_UNAVAILABLE: ServiceUnavailableError,
  INSUFFICIENT_BALANCE: InsufficientBalanceError,
};

/** The error of `extensions.code`'s class (ApiError for a code without one). */
export function apiErrorOf(message: string, extensions: Record<string, unknown>, context: ErrorContext = {}): ApiError {
  const code = extensions['code'];
  const ErrorClass = (typeof code === 'string' && Object.hasOwn(ERROR_CLASSES, code) ? ERROR_CLASSES[code] : undefined) ?? ApiError;
  return new ErrorClass(message, extensions, context);
}

export interface GraphQLErrorShape {
  message: string;
  extensions?: Record<string, unknown>;
}

export function errorOf(errors: readonly GraphQLErrorShape[], context: ErrorContext = {}): ApiError {
  const [first] = errors;
  return apiErrorOf(first?.message ?? 'The API answered with an error.', first?.extensions ?? {}, context);
}
