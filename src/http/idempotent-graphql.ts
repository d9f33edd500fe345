// Idempotency-Key on GraphQL mutations (shared/API.md, "Keys and headers"). The key is scoped to the
// credential that sent it. Only a response of an operation that executed is kept: refusals, invalid input,
// conflicts and server errors leave the key free for a corrected retry, as Stripe does.
import { createHash } from 'node:crypto';
import { parse, type OperationDefinitionNode } from 'graphql';
import { ERROR_CODES, type ErrorCode } from '../domain/errors.ts';
import type { IdempotencyService } from '../services/idempotency.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../services/idempotency.ts';

const NOT_EXECUTED: ReadonlySet<string> = new Set<ErrorCode>([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'INVALID_INPUT',
  'QUERY_TOO_COMPLEX',
  'CONFLICT',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'SERVICE_UNAVAILABLE',
  'INTERNAL',
]);

interface GraphQLRequestBody {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** The request's canonical hash when it is a mutation, else null (queries need no idempotency). */
export function mutationHash(body: Buffer): string | null {
  let request: GraphQLRequestBody;
  try {
    request = JSON.parse(body.toString('utf8')) as GraphQLRequestBody;
    if (typeof request?.query !== 'string') return null;
    const operations = parse(request.query).definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === 'OperationDefinition');
    const operation = operations.find((candidate) => !request.operationName || candidate.name?.value === request.operationName);
    if (operation?.operation !== 'mutation') return null;
  } catch {
    return null; // GraphQL itself will report the malformed request
  }
  return createHash('sha256').update(JSON.stringify([request.query, request.variables ?? null, request.operationName ?? null])).digest('hex');
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const errorResponse = (code: ErrorCode, message: string, field?: string): PlainResponse => ({
  status: ERROR_CODES[code].httpStatus,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({ errors: [{ message, extensions: { code, ...(field ? { field } : {}) } }] }),
});

function executed(response: PlainResponse): boolean {
  if (response.status >= 500) return false;
  try {
    const errors = (JSON.parse(response.body) as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
    return !errors.some((error) => NOT_EXECUTED.has(error.extensions?.code ?? 'INTERNAL'));
  } catch {
    return false;
  }
}

/** Runs `execute` at most once per (credential, key) for the same request, and replays its response. */
export async function runIdempotently(
  idempotency: IdempotencyService,
  credential: string,
  key: string,
  requestHash: string,
  execute: () => Promise<PlainResponse>,
): Promise<PlainResponse> {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return errorResponse('INVALID_INPUT', `Idempotency-Key: must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, 'Idempotency-Key');
  }
  const scope = createHash('sha256').update(credential).digest('hex');
  const start = await idempotency.begin(scope, key, requestHash);
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
    await idempotency.abandon(scope, key);
    throw error;
  }
  if (executed(response)) await idempotency.complete(scope, key, response.status, response.body);
  else await idempotency.abandon(scope, key);
  return response;
}
