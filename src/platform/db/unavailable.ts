// Whether an error means "PostgreSQL cannot be reached right now" (down, restarting, refusing connections, a
// connection cut mid-query, no pooled connection free in time), as opposed to a bug or a bad query: the API answers the first with the
// catalog's SERVICE_UNAVAILABLE (retry later) instead of masking it as INTERNAL.
import { AppError } from '../../kernel/errors.ts';
import type { PrismaErrorLike } from './prisma-error.ts';

/** Prisma's codes for an unreachable server, a timed-out socket and a closed connection. */
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017']);
/** The driver adapter's kinds of the same (Prisma 7, @prisma/adapter-pg). */
const UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/**
 * SQLSTATE: class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or in recovery), 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** node-postgres's own errors, which carry no code: the server went away mid-query, or no connection came in time. */
const DRIVER_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/**
 * Prisma's P2028 when no pooled connection came free within the transaction's maxWait: the database is
 * saturated (a burst of confirms queued on one row lock, say), which a retry later resolves. P2028 also
 * covers programming errors (a closed transaction used again), hence the message is matched too.
 */
const TRANSACTION_NOT_STARTED = { code: 'P2028', message: /Unable to start a transaction in the given time/ };

/** A Prisma error, or an error wrapping one (GraphQL's originalError, `cause`). */
interface ErrorLike extends PrismaErrorLike {
  cause?: unknown;
  originalError?: unknown;
}

function unavailable(error: ErrorLike): boolean {
  if (error.code === TRANSACTION_NOT_STARTED.code && typeof error.message === 'string' && TRANSACTION_NOT_STARTED.message.test(error.message)) return true;
  if (typeof error.code === 'string' && (UNREACHABLE_CODES.has(error.code) || SOCKET_CODES.has(error.code) || UNAVAILABLE_SQLSTATE.test(error.code)))
    return true;
  const cause = error.meta?.driverAdapterError?.cause;
  if (cause !== undefined) {
    if (typeof cause.kind === 'string' && UNREACHABLE_KINDS.has(cause.kind)) return true;
    if (typeof cause.originalCode === 'string' && UNAVAILABLE_SQLSTATE.test(cause.originalCode)) return true;
  }
  return typeof error.message === 'string' && DRIVER_MESSAGES.test(error.message);
}

/** What the API answers when the database cannot be reached: a SERVICE_UNAVAILABLE, to retry later. */
export const databaseUnavailable = () => new AppError('SERVICE_UNAVAILABLE', 'The database cannot be reached right now; retry later.');

/** Whether `error`, or an error it wraps (GraphQL's originalError, `cause`), says the database cannot be reached. */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 10 && current !== null && typeof current === 'object'; depth += 1) {
    const candidate = current as ErrorLike;
    if (unavailable(candidate)) return true;
    current = candidate.originalError ?? candidate.cause;
  }
  return false;
}
