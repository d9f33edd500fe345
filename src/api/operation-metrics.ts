// GraphQL operations measured (docs/operations.md, "Metrics"), and every error answer made traceable
// (docs/api.md, "Errors"). An operation is labelled by its root field, a name from the schema (so the label
// set is bounded), never by the client's free-text operation name.
import { getOperationAST, GraphQLError, Kind, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Metrics } from '../platform/http/metrics.ts';
import { secondsSince } from '../platform/http/metrics.ts';
import { currentScope, errorReferences, type RequestScope } from '../platform/request-scope.ts';

/** The label of a request that never reached execution (unparsable, invalid) or selects no field. */
export const ANONYMOUS_OPERATION = 'anonymous';
/** The label of an operation selecting several root fields. */
export const MULTIPLE_OPERATIONS = 'multiple';

/** The root field `document`'s operation selects: validated before execution, so one of the schema's. */
export function operationLabelOf(document: DocumentNode, operationName: string | null | undefined): { operation: string; type: string } {
  const definition = getOperationAST(document, operationName);
  if (!definition) return { operation: ANONYMOUS_OPERATION, type: 'unknown' };
  let operation = ANONYMOUS_OPERATION;
  for (const selection of definition.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.name.value === '__typename') continue;
    if (operation !== ANONYMOUS_OPERATION) return { operation: MULTIPLE_OPERATIONS, type: definition.operation };
    operation = selection.name.value;
  }
  return { operation, type: definition.operation };
}

/** The catalog code of an answer's error (useErrorCodes has given every one a code by then). */
export const codeOf = (error: GraphQLError): string => (typeof error.extensions?.code === 'string' ? error.extensions.code : 'INTERNAL');

/**
 * Times each query and mutation (a subscription: until its stream starts) by its root field, and counts each
 * error of an answer by root field and code. Placed after useErrorCodes, so every error has its code.
 */
export function useOperationMetrics(metrics: Metrics): Plugin {
  // The label of the operation a request executed, for its answer's errors; requests refused before execution have none.
  const labels = new WeakMap<Request, string>();
  const measure = (args: { document: DocumentNode; operationName?: string | null; contextValue: unknown }) => {
    const started = process.hrtime.bigint();
    const { operation, type } = operationLabelOf(args.document, args.operationName);
    const request = (args.contextValue as { request?: Request }).request;
    if (request) labels.set(request, operation);
    return () => metrics.graphqlDuration.labels(operation, type).observe(secondsSince(started));
  };
  return {
    onExecute: ({ args }) => {
      const done = measure(args);
      return { onExecuteDone: done };
    },
    onSubscribe: ({ args }) => {
      const done = measure(args);
      return { onSubscribeResult: done };
    },
    onResultProcess({ request, result, serverContext }) {
      if (Array.isArray(result) || isAsyncIterable(result) || !result.errors) return;
      // A keyed request that lost its key to another stops with CONFLICT, an answer never sent: the key's record
      // answers instead (idempotent-graphql.ts), as it does, uncounted, for a request that found the key taken first.
      if ((serverContext as { idempotencyClaim?: { lost: boolean } }).idempotencyClaim?.lost) return;
      countErrors(metrics, labels.get(request) ?? ANONYMOUS_OPERATION, result.errors as readonly GraphQLError[]);
    },
  };
}

/** Counts an answer's errors under `operation` by code. */
export function countErrors(metrics: Metrics, operation: string, errors: readonly GraphQLError[]): void {
  for (const error of errors) metrics.graphqlErrors.labels(operation, codeOf(error)).inc();
}

/** `error` with `requestId` (of `scope`) and `docs` (the code's row in docs/api.md) in its extensions. */
export function withErrorReferences(error: GraphQLError, scope: RequestScope | undefined): GraphQLError {
  const { message, nodes, source, positions, path, extensions } = error;
  return new GraphQLError(message, { nodes, source, positions, path, extensions: { ...extensions, ...errorReferences(codeOf(error), scope) } });
}

/** Adds `requestId` and `docs` (the code's row in docs/api.md) to each error of an answer, after useErrorCodes. */
export function useErrorReferences(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || isAsyncIterable(result) || !result.errors) return;
      const scope = currentScope();
      setResult({
        ...result,
        errors: result.errors.map((error) => withErrorReferences(error as GraphQLError, scope)),
      });
    },
  };
}
