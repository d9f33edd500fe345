// Idempotency-Key on GraphQL mutations (docs/api.md, "Keys and headers"), with Stripe's semantics: the
// key is scoped to the authenticated API key that sent it (and the connected merchant a platform's key acts for:
// docs/platforms.md), and the response of every request that began
// executing is kept, errors included (a processor failure, a decline, an internal error), so a retry
// never runs an operation twice. Only a request refused before it could act (no or a bad key, invalid
// input, limits, a concurrent request) leaves the key free for a corrected retry. A keyed document holds
// one mutation field: with two, one could act while the other is refused, and no answer could say which.
import { currentScope, errorReferences } from '../platform/request-scope.ts';
import { GraphQLError, Kind, parse, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionNode } from 'graphql';
import { AppError, ERROR_CODES, headersOf, type ErrorCode } from '../kernel/errors.ts';
import { TOO_DEEP_TO_PARSE } from '../platform/graphql/errors.ts';
import type { IdempotencyService } from '../platform/http/idempotency.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../platform/http/idempotency.ts';
import type { DocumentCache } from './yoga.ts';

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

export interface KeyedMutation {
  kind: 'mutation';
  /** The request as the key's record fingerprints it. */
  canonical: string;
  /** How many root fields the operation runs (at most one: more are refused). */
  rootFields: number;
}

/** How an Idempotency-Key applies to a request body. */
export type KeyedRequest =
  | KeyedMutation
  /**
   * Nothing the key could protect: a query or subscription (the key is ignored, as Stripe ignores it on
   * GET), or a syntax error (the same parser refuses it again before anything runs).
   */
  | { kind: 'unkeyed' }
  /** Refused before execution: the answer says why. */
  | { kind: 'refused'; response: PlainResponse };

/** The root fields `operation` runs, fragments spread at its root included (`__typename` acts on nothing). */
function rootFieldCount(document: DocumentNode, operation: OperationDefinitionNode): number {
  const fragments = new Map(
    document.definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
  const spread = new Set<string>();
  const pending: SelectionNode[] = [...operation.selectionSet.selections];
  let count = 0;
  // A loop, not recursion: fragments nested as deep as the parser allows cannot overflow the stack here.
  for (let selection = pending.pop(); selection !== undefined; selection = pending.pop()) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) count += 1;
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      pending.push(...selection.selectionSet.selections);
    } else if (!spread.has(selection.name.value)) {
      spread.add(selection.name.value);
      pending.push(...(fragments.get(selection.name.value)?.selectionSet.selections ?? []));
    }
  }
  return count;
}

/** What a document that did not parse gets: a limit is QUERY_TOO_COMPLEX; a syntax error is left to GraphQL's own answer. */
function parseRefusal(error: unknown, maxTokens: number): KeyedRequest {
  if (error instanceof RangeError) return { kind: 'refused', response: errorResponse('QUERY_TOO_COMPLEX', TOO_DEEP_TO_PARSE) };
  if (!(error instanceof GraphQLError)) throw error;
  if (error.message.includes('Parsing aborted'))
    return { kind: 'refused', response: errorResponse('QUERY_TOO_COMPLEX', `Syntax Error: Token limit of ${maxTokens} exceeded.`) };
  return { kind: 'unkeyed' };
}

/**
 * How a keyed request is handled, parsing its query no further than `maxTokens` tokens (the limit every
 * GraphQL request has) unless `documents` has it already; a document parsed here is kept there for Yoga,
 * which then parses it no more. The caller has been authenticated already.
 */
export function classifyKeyedRequest(body: Buffer | undefined, maxTokens: number, documents: DocumentCache): KeyedRequest {
  if (!body?.length) return { kind: 'refused', response: unsupportedKeyedRequest() };
  let request: GraphQLRequestBody;
  try {
    request = JSON.parse(body.toString('utf8')) as GraphQLRequestBody;
  } catch {
    return { kind: 'refused', response: unsupportedKeyedRequest() };
  }
  if (typeof request?.query !== 'string') return { kind: 'refused', response: unsupportedKeyedRequest() };
  let document = documents.get(request.query);
  if (document === undefined) {
    try {
      document = parse(request.query, { maxTokens });
    } catch (error) {
      return parseRefusal(error, maxTokens);
    }
    documents.set(request.query, document);
  }
  const operation = document.definitions
    .filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
    .find((candidate) => !request.operationName || candidate.name?.value === request.operationName);
  if (operation?.operation !== 'mutation') return { kind: 'unkeyed' };
  const fields = rootFieldCount(document, operation);
  if (fields > 1) {
    const message = `Idempotency-Key: one mutation field per keyed request; this operation has ${fields} (send each with its own key)`;
    return { kind: 'refused', response: errorResponse('INVALID_INPUT', message, 'Idempotency-Key') };
  }
  try {
    return { kind: 'mutation', canonical: JSON.stringify([request.query, request.variables ?? null, request.operationName ?? null]), rootFields: fields };
  } catch {
    // Variables nested deeper than JSON.stringify can go (a RangeError): no request to hold the key for.
    return { kind: 'refused', response: unsupportedKeyedRequest() };
  }
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A refusal as a plain answer, with the request's id and its code's docs like every error answer (docs/api.md). */
export function errorResponse(code: ErrorCode, message: string, field?: string): PlainResponse {
  return appErrorResponse(new AppError(code, message, field ? { field } : {}));
}

/** An AppError as a plain answer: its catalog status, its details in `extensions`, its headers (Retry-After). */
export function appErrorResponse(error: AppError): PlainResponse {
  return {
    status: ERROR_CODES[error.code].httpStatus,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headersOf(error) },
    body: JSON.stringify({
      errors: [{ message: error.message, extensions: { code: error.code, ...error.details, ...errorReferences(error.code, currentScope()) } }],
    }),
  };
}

const unsupportedKeyedRequest = () =>
  errorResponse(
    'INVALID_INPUT',
    'Idempotency-Key: only accepted on a POST with a JSON GraphQL body ({"query": ..., "variables": ...}) of ordinary nesting depth',
    'Idempotency-Key',
  );

/** A key is kept per API key: a caller without one has nowhere to keep it. */
export const keyWithoutApiKey = () =>
  errorResponse(
    'UNAUTHENTICATED',
    'Idempotency-Key: needs an API key (header "api-key" or "Authorization: Bearer"); keys are kept per API key',
    'Idempotency-Key',
  );

interface GraphQLAnswer {
  data?: Record<string, unknown> | null;
  errors?: { path?: unknown[]; extensions?: { code?: string } }[];
}

/**
 * Whether the operation may have acted: every answer except one that shows it was refused before it
 * could act. That is a request refused as a whole (no `data`), or each of its `rootFields` root fields
 * refused by its own resolver (a refusal at each root path, and no root field with a value). An error
 * below a root field comes after that field acted, whatever its code.
 */
export function mayHaveActed(response: PlainResponse, rootFields: number): boolean {
  let answer: GraphQLAnswer;
  try {
    answer = JSON.parse(response.body) as GraphQLAnswer;
  } catch {
    return true; // no GraphQL answer at all: nothing says it did not act
  }
  const errors = answer.errors ?? [];
  if (errors.length === 0 || !errors.every((error) => REFUSED_BEFORE_EXECUTION.has(error.extensions?.code ?? ''))) return true;
  if (!('data' in answer)) return false;
  if (answer.data !== null && typeof answer.data === 'object' && Object.values(answer.data).some((value) => value !== null)) return true;
  const refusedRoots = new Set(errors.map((error) => (Array.isArray(error.path) && error.path.length === 1 ? String(error.path[0]) : null)));
  return refusedRoots.has(null) || refusedRoots.size < rootFields;
}

/** Runs `execute` at most once per (API key, Idempotency-Key) for the same request, and replays its response. */
export async function runIdempotently(
  idempotency: IdempotencyService,
  scope: string,
  key: string,
  request: KeyedMutation,
  execute: () => Promise<PlainResponse>,
): Promise<PlainResponse> {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return errorResponse('INVALID_INPUT', `Idempotency-Key: must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, 'Idempotency-Key');
  }
  const start = await idempotency.begin(scope, key, idempotency.requestHash(request.canonical));
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
    const internal = errorResponse('INTERNAL', 'Internal error; it has been logged.');
    await idempotency.complete(scope, key, internal.status, internal.body);
    throw error;
  }
  if (mayHaveActed(response, request.rootFields)) await idempotency.complete(scope, key, response.status, response.body);
  else await idempotency.abandon(scope, key);
  return response;
}
