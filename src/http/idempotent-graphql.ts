// Idempotency-Key on GraphQL mutations (shared/API.md, "Keys and headers"), with Stripe's semantics: the
// key is scoped to the authenticated API key that sent it, and the response of every request that began
// executing is kept, errors included (a processor failure, a decline, an internal error), so a retry
// never runs an operation twice. Only a request refused before it could act (no or a bad key, invalid
// input, limits, a concurrent request) leaves the key free for a corrected retry.
import { parse, type OperationDefinitionNode } from 'graphql';
import { ERROR_CODES, type ErrorCode } from '../domain/errors.ts';
import type { IdempotencyService } from '../services/idempotency.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../services/idempotency.ts';

const REFUSED_BEFORE_EXECUTION: ReadonlySet<string> = new Set<ErrorCode>([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'INVALID_INPUT',
  'QUERY_TOO_COMPLEX',
  'CONFLICT',
  'IDEMPOTENCY_MISMATCH',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'SERVICE_UNAVAILABLE',
]);

interface GraphQLRequestBody {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** How an Idempotency-Key applies to a request body. */
export type KeyedRequest =
  | { kind: 'mutation'; canonical: string }
  /** A query or subscription: nothing to protect, the key is ignored (as Stripe ignores it on GET). */
  | { kind: 'read' }
  /** Not a JSON GraphQL request: a key on it could not be honoured, so it is refused. */
  | { kind: 'unsupported' };

export function classifyKeyedRequest(body: Buffer | undefined): KeyedRequest {
  if (!body?.length) return { kind: 'unsupported' };
  let request: GraphQLRequestBody;
  let operation: OperationDefinitionNode | undefined;
  try {
    request = JSON.parse(body.toString('utf8')) as GraphQLRequestBody;
    if (typeof request?.query !== 'string') return { kind: 'unsupported' };
    const operations = parse(request.query).definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === 'OperationDefinition');
    operation = operations.find((candidate) => !request.operationName || candidate.name?.value === request.operationName);
  } catch {
    return { kind: 'unsupported' };
  }
  if (operation?.operation !== 'mutation') return { kind: 'read' };
  try {
    return { kind: 'mutation', canonical: JSON.stringify([request.query, request.variables ?? null, request.operationName ?? null]) };
  } catch {
    // Variables nested deeper than JSON.stringify can go (a RangeError): no request to hold the key for.
    return { kind: 'unsupported' };
  }
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function errorResponse(code: ErrorCode, message: string, field?: string): PlainResponse {
  return {
    status: ERROR_CODES[code].httpStatus,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ errors: [{ message, extensions: { code, ...(field ? { field } : {}) } }] }),
  };
}

export const UNSUPPORTED_KEYED_REQUEST = errorResponse(
  'INVALID_INPUT',
  'Idempotency-Key: only accepted on a POST with a JSON GraphQL body ({"query": ..., "variables": ...}) of ordinary nesting depth',
  'Idempotency-Key',
);

/** Whether the operation may have acted: every answer except a refusal before execution. */
function mayHaveActed(response: PlainResponse): boolean {
  let errors: { extensions?: { code?: string } }[];
  try {
    errors = (JSON.parse(response.body) as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
  } catch {
    return true; // no GraphQL answer at all: nothing says it did not act
  }
  return !errors.some((error) => REFUSED_BEFORE_EXECUTION.has(error.extensions?.code ?? ''));
}

const INTERNAL_ERROR = errorResponse('INTERNAL', 'Internal error; it has been logged.');

/** Runs `execute` at most once per (API key, Idempotency-Key) for the same request, and replays its response. */
export async function runIdempotently(
  idempotency: IdempotencyService,
  scope: string,
  key: string,
  canonicalRequest: string,
  execute: () => Promise<PlainResponse>,
): Promise<PlainResponse> {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return errorResponse('INVALID_INPUT', `Idempotency-Key: must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, 'Idempotency-Key');
  }
  const start = await idempotency.begin(scope, key, idempotency.requestHash(canonicalRequest));
  switch (start.kind) {
    case 'mismatch':
      return errorResponse('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was already used with a different request; use a new key.');
    case 'in_progress':
      return errorResponse('CONFLICT', 'A request with this Idempotency-Key is still running; retry shortly.');
    case 'replay':
      return { status: start.statusCode, headers: { 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' }, body: start.body };
    case 'new':
      break;
  }
  let response: PlainResponse;
  try {
    response = await execute();
  } catch (error) {
    // It may have acted before failing: keep the failure, so a retry is not a second run.
    await idempotency.complete(scope, key, INTERNAL_ERROR.status, INTERNAL_ERROR.body);
    throw error;
  }
  if (mayHaveActed(response)) await idempotency.complete(scope, key, response.status, response.body);
  else await idempotency.abandon(scope, key);
  return response;
}
