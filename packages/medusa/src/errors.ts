// Our API's errors as Medusa's: Medusa's error handler answers a MedusaError with its type's HTTP status and
// message, and anything else with 500 "An unknown error occurred" (docs/medusa.md, "Errors").
import { MedusaError } from '@medusajs/framework/utils';
import {
  ApiError,
  CardDeclinedError,
  ConflictError,
  IdempotencyError,
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  WebhookVerificationError,
} from '@payments-orchestrator/node';

type MedusaErrorType = (typeof MedusaError.Types)[keyof typeof MedusaError.Types];

/** The Medusa error type of each of our error classes; every other ApiError is UNEXPECTED_STATE. */
export const MEDUSA_ERROR_TYPES: ReadonlyArray<readonly [new (...args: never[]) => ApiError, MedusaErrorType]> = [
  [InvalidInputError, MedusaError.Types.INVALID_DATA],
  [WebhookVerificationError, MedusaError.Types.INVALID_DATA],
  [NotFoundError, MedusaError.Types.NOT_FOUND],
  [InvalidStateError, MedusaError.Types.NOT_ALLOWED],
  [CardDeclinedError, MedusaError.Types.PAYMENT_AUTHORIZATION_ERROR],
  [ConflictError, MedusaError.Types.CONFLICT],
  [IdempotencyError, MedusaError.Types.CONFLICT],
];

/** `error` as a MedusaError with our message and code when it is one of our API's errors; anything else unchanged. */
export function medusaErrorOf(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const type = MEDUSA_ERROR_TYPES.find(([ErrorClass]) => error instanceof ErrorClass)?.[1] ?? MedusaError.Types.UNEXPECTED_STATE;
  const translated = new MedusaError(type, error.message, error.code);
  translated.cause = error;
  return translated;
}
