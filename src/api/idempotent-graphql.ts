// Idempotency-Key on GraphQL mutations (docs/api.md, "Keys and headers"), with Stripe's semantics: the
// key is scoped to the authenticated API key that sent it (and the connected merchant a platform's key acts for:
// docs/platforms.md), and the response of every request that began
// executing is kept, errors included (a processor failure, a decline, an internal error), so a retry
// never runs an operation twice. Only a request refused before it could act (no or a bad key, invalid
// input, limits, a concurrent request) leaves the key free for a corrected retry. A keyed document holds
// one mutation field: with two, one could act while the other is refused, and no answer could say which.
import { currentScope, errorReferences } from '../platform/request-scope.ts';
import {
  GraphQLError,
  Kind,
  parse,
  type DocumentNode,
  type GraphQLSchema,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
} from 'graphql';
import { AppError, ERROR_CODES, headersOf, type ErrorCode } from '../kernel/errors.ts';
import { TOO_DEEP_TO_PARSE } from '../platform/graphql/errors.ts';
import type { IdempotencyClaim, IdempotencyService, IdempotencyStart } from '../platform/http/idempotency.ts';
import { CLAIM_ON_FIRST_WRITE, MAX_IDEMPOTENCY_KEY_LENGTH } from '../platform/http/idempotency.ts';
import { WriteWitness, witnessing } from '../platform/db/write-witness.ts';
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
  /** Its field takes the key with its first write (CLAIM_ON_FIRST_WRITE), not before it runs. */
  claimOnFirstWrite: boolean;
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

/** The mutation fields of `schema` marked CLAIM_ON_FIRST_WRITE. */
export function fieldsClaimingOnFirstWrite(schema: GraphQLSchema): ReadonlySet<string> {
  const fields = Object.values(schema.getMutationType()?.getFields() ?? {});
  return new Set(fields.filter((field) => field.extensions[CLAIM_ON_FIRST_WRITE] === true).map((field) => field.name));
}

/** The names of the root fields `operation` runs, fragments spread at its root included (`__typename` acts on nothing). */
function rootFieldNames(document: DocumentNode, operation: OperationDefinitionNode): string[] {
  const fragments = new Map(
    document.definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
  const spread = new Set<string>();
  const pending: SelectionNode[] = [...operation.selectionSet.selections];
  const names: string[] = [];
  // A loop, not recursion: fragments nested as deep as the parser allows cannot overflow the stack here.
  for (let selection = pending.pop(); selection !== undefined; selection = pending.pop()) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) names.push(selection.name.value);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      pending.push(...selection.selectionSet.selections);
    } else if (!spread.has(selection.name.value)) {
      spread.add(selection.name.value);
      pending.push(...(fragments.get(selection.name.value)?.selectionSet.selections ?? []));
    }
  }
  return names;
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
 * which then parses it no more. `claimingOnFirstWrite` names the mutation fields marked CLAIM_ON_FIRST_WRITE.
 * The caller has been authenticated already.
 */
export function classifyKeyedRequest(
  body: Buffer | undefined,
  maxTokens: number,
  documents: DocumentCache,
  claimingOnFirstWrite: ReadonlySet<string>,
): KeyedRequest {
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
  const fields = rootFieldNames(document, operation);
  if (fields.length > 1) {
    const message = `Idempotency-Key: one mutation field per keyed request; this operation has ${fields.length} (send each with its own key)`;
    return { kind: 'refused', response: errorResponse('INVALID_INPUT', message, 'Idempotency-Key') };
  }
  try {
    return {
      kind: 'mutation',
      canonical: JSON.stringify([request.query, request.variables ?? null, request.operationName ?? null]),
      rootFields: fields.length,
      claimOnFirstWrite: fields.length === 1 && claimingOnFirstWrite.has(fields[0]!),
    };
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
  execute: (claim?: IdempotencyClaim) => Promise<PlainResponse>,
): Promise<PlainResponse> {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return errorResponse('INVALID_INPUT', `Idempotency-Key: must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, 'Idempotency-Key');
  }
  const claim = idempotency.claim(scope, key, idempotency.requestHash(request.canonical));
  if (request.claimOnFirstWrite) {
    // The operation takes the key with its first write (IdempotencyClaim).
    const firstRun = new WriteWitness();
    const response = await runAndSettle(claim, request, () => execute(claim), firstRun);
    if (claim.mayHold) return response;
    // It wrote nothing: the key was another request's, or the operation stopped before writing. The key's
    // record answers if it has one; if not, this request takes it now.
    const lostKey = claim.lost;
    const answer = await takeOrAnswer(idempotency, claim);
    if (answer !== null) return answer;
    // The key is free after all (its record expired, or was abandoned in between). An operation that stopped
    // on its own answered for itself; one that stopped on losing the key runs again, holding it.
    if (!lostKey) return settle(claim, request, response, firstRun.wrote);
  } else {
    const answer = await takeOrAnswer(idempotency, claim);
    if (answer !== null) return answer;
  }
  // A mutation that takes its key with its first write still gets the claim, held now, to say when it wrote.
  return runAndSettle(claim, request, () => execute(request.claimOnFirstWrite ? claim : undefined));
}

/**
 * Takes the key (null: it is this request's now, to run), or answers for the request that took it. For one that
 * stopped without answering, that reason is kept as its answer, first come first kept, so every retry hears the same
 * and none runs the operation again; if it was answered meanwhile (by another retry, or by the request itself, late),
 * or freed, the key is read again.
 */
async function takeOrAnswer(idempotency: IdempotencyService, claim: IdempotencyClaim): Promise<PlainResponse | null> {
  // Each failed keep follows a change of the record (answered, freed or claimed again), so a few reads settle it.
  for (let read = 1; read <= 3; read += 1) {
    const start = await claim.take();
    if (start.kind === 'new') return null;
    if (start.kind !== 'unfinished') return answerToTaken(start);
    const unknown = UNFINISHED();
    if (await idempotency.keepForUnfinished(claim.scope, claim.key, start.claimedAt, unknown.status, unknown.body)) return unknown;
  }
  throw new Error(`idempotency record ${claim.scope}/${claim.key} kept changing while its request stopped unanswered was answered for`);
}

/** The answer to a request whose key another request took: its kept response, or why there is none to give. */
function answerToTaken(start: Exclude<IdempotencyStart, { kind: 'new' | 'unfinished' }>): PlainResponse {
  switch (start.kind) {
    case 'mismatch':
      return errorResponse('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was already used with a different request; use a new key.');
    case 'in_progress':
      return errorResponse('CONFLICT', 'A request with this Idempotency-Key is still running; retry shortly.');
    case 'replay':
      return { status: start.statusCode, headers: { 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' }, body: start.body };
  }
}

/**
 * Runs `execute`, and settles the key with its answer if the claim may hold it by then (`settle`). Whether it wrote
 * is witnessed on the database pool (WriteWitness): a write is where an operation acts (a refund's row before its
 * processor call, a payment's attempt before its authorization), so an answer given after one is kept, whatever
 * its code. A first write held for the answer (IdempotencyClaim.holdFirstWrite) is made once the answer is known,
 * carrying it: that answer is then kept, or the key is lost (the caller answers from its record).
 */
async function runAndSettle(
  claim: IdempotencyClaim,
  request: KeyedMutation,
  execute: () => Promise<PlainResponse>,
  witness = new WriteWitness(),
): Promise<PlainResponse> {
  let response: PlainResponse;
  try {
    response = await witnessing(witness, execute);
  } catch (error) {
    // It may have acted before failing: keep the failure, so a retry is not a second run.
    if (claim.mayHold) await settle(claim, request, INTERNAL_ERROR(), true);
    throw error;
  }
  if (claim.holdsWrite) {
    // One statement takes the key, writes and keeps this answer, or does none of it: the key then holds the answer,
    // or the caller answers from the record that took it. A failure is thrown with nothing more kept, even one that
    // may have committed: a retry replays the answer if it did, runs once if it did not, and waits for a statement
    // still on its way (the key's row is then being inserted) before it reads which.
    await claim.writeHeld(response.status, response.body);
    return response;
  }
  return claim.mayHold ? settle(claim, request, response, witness.wrote) : response;
}

/**
 * Keeps `response` under the key if the operation may have acted (it `wrote`, or its answer says it may have),
 * else frees the key (IdempotencyClaim.settle). Where the operation's first write failed unseen, the answer is an
 * internal error, to this client and every retry alike (a 503 says "try again", and a replay of it never could).
 */
async function settle(claim: IdempotencyClaim, request: KeyedMutation, response: PlainResponse, wrote: boolean): Promise<PlainResponse> {
  const kept = claim.uncertain ? INTERNAL_ERROR() : response;
  await claim.settle(kept.status, kept.body, wrote || mayHaveActed(kept, request.rootFields));
  return kept;
}

const INTERNAL_ERROR = () => errorResponse('INTERNAL', 'Internal error; it has been logged.');

/** The answer under a key whose request stopped without answering: an internal error, which no client retries. */
const UNFINISHED = () =>
  errorResponse(
    'INTERNAL',
    'The request first sent with this Idempotency-Key stopped before it answered, so whether it acted is unknown; it is not run again under this key. Look up what it would have made or changed (a payment, a refund) before sending the request with a new key.',
  );
