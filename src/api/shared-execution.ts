// One execution per published payload for every subscriber that asked for the same thing (docs/subscriptions.md,
// "Fan-out"). Each subscriber still runs its own subscribe resolver, so its authorization, its slot, its backlog bound
// and its end on revocation stay its own (src/api/subscription-gate.ts); what is shared is only the execution of a
// payload its own stream yielded, among subscribers of the same document, variables and authorization scope, whose
// results are therefore identical. The result is also serialized once (sharedPayloadJson) for graphql-ws's frames.
import {
  createSourceEventStream,
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../platform/graphql/context.ts';

type Results = AsyncIterableIterator<ExecutionResult>;

/** The shared executions of each payload, by share key; they go when the payload does. */
const executions = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();
/** The JSON of a shared result without errors, made by the first frame that needs it. */
const serialized = new WeakMap<ExecutionResult, string | null>();
/** A number per parsed document: Yoga's parser cache gives the same text the same document. */
const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 0;

/** What decides what a subscriber may see of a payload: the merchant, mode and role it acts as (not its key: that is per subscriber in the gate). */
function scopeOf(context: GraphQLContext): string {
  const { principal } = context;
  if (!('merchantId' in principal)) return principal.kind;
  const platform = 'platformMerchantId' in principal ? (principal.platformMerchantId ?? '') : '';
  const role = 'user' in principal ? (principal.user?.role ?? '') : '';
  return JSON.stringify([principal.kind, principal.merchantId, principal.mode, platform, role]);
}

/** The JSON of `result` as graphql-ws's `next` payload if it is a shared result without errors, else null (then framed as usual). */
export function sharedPayloadJson(result: ExecutionResult): string | null {
  let json = serialized.get(result);
  if (json === undefined) return null;
  if (json === null) serialized.set(result, (json = JSON.stringify(result)));
  return json;
}

/** `results` mapped source-event by source-event, its errors as graphql-tools' subscribe gives them (located at the operation). */
function mapped(
  source: AsyncIterator<unknown>,
  operation: NonNullable<ReturnType<typeof getOperationAST>>,
  run: (payload: unknown) => Promise<ExecutionResult>,
): Results {
  const located = (error: unknown) =>
    error instanceof GraphQLError
      ? error
      : new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error as Error, nodes: [operation] });
  const iterator: Results = {
    [Symbol.asyncIterator]: () => iterator,
    next: async () => {
      let step;
      try {
        step = await source.next();
      } catch (error) {
        throw located(error);
      }
      return step.done ? { done: true, value: undefined } : { done: false, value: await run(step.value) };
    },
    // Ends the source at once, even while a next() waits: the subscriber's slot is given back now.
    return: async () => {
      await source.return?.();
      return { done: true, value: undefined };
    },
    throw: async (error: unknown) => {
      await source.return?.();
      throw error;
    },
  };
  return iterator;
}

export function useSharedSubscriptionExecution(): Plugin {
  return {
    onSubscribe({ setSubscribeFn, subscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const operation = getOperationAST(args.document, args.operationName);
        const variables = operation && getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
        // Anything unusual (no operation, variables refused) takes the usual path, which answers it as usual.
        if (!operation || operation.operation !== 'subscription' || variables?.coerced === undefined) return subscribeFn(args);
        const source = await createSourceEventStream(args);
        if (!(Symbol.asyncIterator in source)) return source;
        let documentId = documentIds.get(args.document);
        if (documentId === undefined) documentIds.set(args.document, (documentId = nextDocumentId++));
        const key = JSON.stringify([documentId, args.operationName ?? null, variables.coerced, scopeOf(args.contextValue as GraphQLContext)]);
        return mapped(source[Symbol.asyncIterator](), operation, (payload) => {
          if (payload === null || typeof payload !== 'object') return Promise.resolve(execute({ ...args, rootValue: payload }));
          let byKey = executions.get(payload);
          if (byKey === undefined) executions.set(payload, (byKey = new Map()));
          let result = byKey.get(key);
          if (result === undefined) {
            result = Promise.resolve(execute({ ...args, rootValue: payload })).then((done) => {
              if (done.errors === undefined) serialized.set(done, null);
              return done;
            });
            byKey.set(key, result);
          }
          return result;
        });
      });
    },
  };
}
