// One execution per published payload for every subscriber that asked for the same thing (docs/subscriptions.md,
// "Fan-out"). Each subscriber still runs its own subscribe resolver, so its authorization, its slot, its backlog bound
// and its end on revocation stay its own (src/api/subscription-gate.ts); what is shared is only the execution of a
// payload its own stream yielded, among subscribers of the same document, variables and authorization scope, whose
// results are therefore identical. The result is also serialized once (sharedPayloadJson) for graphql-ws's frames.
// Over graphql-ws, a subscription whose stream can push (src/kernel/async-streams.ts) is not iterated at all: each
// value goes from the live feed's listener through the resolver's filter and the gate to a ready frame on the socket
// by plain calls (PushedSubscription, below), which is what lets one process feed thousands of subscribers.
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
import { RequestCache } from '@pothos/plugin-scope-auth';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../platform/graphql/context.ts';
import type { Metrics } from '../platform/http/metrics.ts';
import { pushSideOf, type Attach } from '../kernel/async-streams.ts';
import { backlogExceeded, MAX_UNREAD_RESULTS } from './subscription-gate.ts';

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

type Operation = NonNullable<ReturnType<typeof getOperationAST>>;

/** A source's error as graphql-tools' subscribe gives it: a GraphQLError located at the operation. */
function locatedAt(operation: Operation): (error: unknown) => GraphQLError {
  return (error) =>
    error instanceof GraphQLError
      ? error
      : new GraphQLError(error instanceof Error ? error.message : String(error), { originalError: error as Error, nodes: [operation] });
}

/** `results` mapped source-event by source-event, its errors as graphql-tools' subscribe gives them (located at the operation). */
function mapped(source: AsyncIterator<unknown>, operation: Operation, run: (payload: unknown) => Promise<ExecutionResult>): Results {
  const located = locatedAt(operation);
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

/** What a transport that writes frames itself puts in an operation's root value (graphql-ws: src/api/graphql-ws.ts). */
export interface ReadyFrames {
  /** Writes a `next` frame around `payloadJson` now; false when the reader has more unsent than it may. */
  sendReady(payloadJson: string): boolean;
  /**
   * Set once the subscription writes its shared frames itself (PushedSubscription): its stream then yields only results the
   * transport frames as usual, so the transport need not look at each.
   */
  writesOwnFrames?: boolean;
}

function readyFramesOf(rootValue: unknown): ReadyFrames | undefined {
  const frames = rootValue as Partial<ReadyFrames> | null | undefined;
  return typeof frames?.sendReady === 'function' ? (frames as ReadyFrames) : undefined;
}

/** One execution of a pushed value under one share key: its outcome once known, and whose flush waits for it. */
interface PushedExecution {
  result?: ExecutionResult;
  /** The result as a frame's payload, serialized once, when it has no errors (one with errors is each subscriber's own to frame). */
  json?: string;
  /** Executing or serializing it threw: the subscription ends with this, as an iterated one would. */
  failure?: unknown;
  waiters: (() => void)[];
}

/** The pushed executions of each value (an object), by share key; they go when the value does. */
const pushedExecutions = new WeakMap<object, Map<string, PushedExecution>>();

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';

function pushedExecution(value: unknown, key: string, run: (payload: unknown) => ExecutionResult | Promise<ExecutionResult>): PushedExecution {
  const byKey = value !== null && typeof value === 'object' ? (pushedExecutions.get(value) ?? new Map<string, PushedExecution>()) : null;
  const known = byKey?.get(key);
  if (known !== undefined) return known;
  const execution: PushedExecution = { waiters: [] };
  if (byKey !== null) pushedExecutions.set(value as object, byKey.set(key, execution));
  // Each waiter's flush ends its own subscription on its own failure (PushedSubscription): one cannot keep the others waiting.
  const settled = () => {
    const { waiters } = execution;
    execution.waiters = [];
    for (const wake of waiters) wake();
  };
  const fail = (error: unknown) => {
    execution.failure = error;
    settled();
  };
  const succeed = (result: ExecutionResult) => {
    try {
      if (result.errors === undefined) execution.json = JSON.stringify(result);
    } catch (error) {
      return fail(error);
    }
    execution.result = result;
    settled();
  };
  try {
    const result = run(value);
    if (isPromiseLike(result)) result.then(succeed, fail);
    else succeed(result);
  } catch (error) {
    fail(error);
  }
  return execution;
}

const noop = () => {};

/**
 * A subscription fed by its source's push side and written by the transport's ready frames: each pushed value's
 * shared execution is queued, and frames go out in the values' order as soon as they are known, by plain calls,
 * with no promise per subscriber and value. What the transport must frame itself (a result with errors, which
 * carries each subscriber's request id) and the end come out of it as an iterator, which graphql-ws reads; a
 * frame written directly waits while such a result is out, so order holds. The backlog is bounded here, where
 * values wait: more than MAX_UNREAD_RESULTS queued, or more unsent than the socket may hold, ends it.
 * A class rather than closures: one is held per subscriber for its whole life, and its methods live on the
 * prototype, so each subscriber holds only its fields.
 */
class PushedSubscription implements Results {
  readonly #queue: PushedExecution[] = [];
  /** Results for the iterator (the ones with errors), in order. */
  readonly #unread: ExecutionResult[] = [];
  #reader: { resolve: (step: IteratorResult<ExecutionResult>) => void; reject: (error: unknown) => void } | null = null;
  /** A result was handed to the reader and may not be written yet: nothing goes out directly before it. */
  #handed = false;
  /** How the subscription ended: its error (for the reader once what came before it is out), and whether what was queued is dropped. */
  #ended: { error?: Error; dropQueued: boolean } | null = null;
  #waitingOn: PushedExecution | null = null;
  /** A no-op until attach returns: the source may end the subscription synchronously while it is being attached. */
  #detach: () => void = noop;
  /** What an execution's waiters hold while this subscription waits on it: one function for the subscription's life. */
  readonly #wake = () => {
    this.#waitingOn = null;
    this.#flush();
  };

  readonly #frames: ReadyFrames;
  readonly #executionOf: (value: unknown) => PushedExecution;
  readonly #located: (error: unknown) => GraphQLError;
  readonly #backlogError: (what: string) => Error;

  constructor(
    attach: Attach<unknown>,
    frames: ReadyFrames,
    executionOf: (value: unknown) => PushedExecution,
    located: (error: unknown) => GraphQLError,
    backlogError: (what: string) => Error,
  ) {
    this.#frames = frames;
    this.#executionOf = executionOf;
    this.#located = located;
    this.#backlogError = backlogError;
    this.#detach = attach({
      next: (value) => {
        if (this.#ended !== null) return;
        this.#queue.push(this.#executionOf(value));
        if (this.#queue.length > MAX_UNREAD_RESULTS) this.#end(this.#backlogError(`More than ${MAX_UNREAD_RESULTS} results were left unread`), true);
        else if (this.#queue.length === 1) this.#flush();
      },
      // The source ended (a revoked key, Redis lost): what it had already given still goes out, then the error.
      end: (error) => {
        this.#end(error, false);
        this.#flush();
      },
    });
  }

  [Symbol.asyncIterator](): Results {
    return this;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    return new Promise((resolve, reject) => {
      this.#reader = { resolve, reject };
      this.#handed = false;
      if (this.#unread.length === 0) this.#flush();
      this.#answerReader();
    });
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.#stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.#stop();
    return Promise.reject(error as Error);
  }

  #answerReader(): void {
    if (this.#reader === null) return;
    const { resolve, reject } = this.#reader;
    if (this.#unread.length > 0) {
      this.#reader = null;
      this.#handed = true;
      resolve({ done: false, value: this.#unread.shift()! });
    } else if (this.#ended !== null && this.#queue.length === 0) {
      this.#reader = null;
      const { error } = this.#ended;
      this.#ended = { dropQueued: true };
      if (error === undefined) resolve({ done: true, value: undefined });
      else reject(error);
    }
  }

  /** Stops listening; what was queued still goes out before the end unless `dropQueued` (a cut, or the reader left). */
  #end(error: unknown, dropQueued: boolean): void {
    if (this.#ended !== null) return;
    this.#ended = { ...(error === undefined ? {} : { error: this.#located(error) }), dropQueued };
    if (dropQueued) {
      this.#queue.length = 0;
      this.#stopWaiting();
    }
    this.#detach();
    this.#answerReader();
  }

  #stopWaiting(): void {
    const waitingOn = this.#waitingOn;
    if (waitingOn !== null) waitingOn.waiters = waitingOn.waiters.filter((waiter) => waiter !== this.#wake);
    this.#waitingOn = null;
  }

  #flush(): void {
    const queue = this.#queue;
    while (queue.length > 0 && this.#unread.length === 0 && !this.#handed) {
      const head = queue[0]!;
      if (head.result === undefined && head.failure === undefined) {
        if (this.#waitingOn !== head) head.waiters.push(this.#wake);
        this.#waitingOn = head;
        return;
      }
      queue.shift();
      if (head.failure !== undefined) return this.#end(head.failure, true);
      if (head.json === undefined) {
        this.#unread.push(head.result!);
        continue;
      }
      let accepted;
      try {
        accepted = this.#frames.sendReady(head.json);
      } catch (error) {
        return this.#end(error, true);
      }
      if (!accepted) return this.#end(this.#backlogError('More results were left unsent than the connection may hold'), true);
    }
    this.#answerReader();
  }

  #stop(): void {
    this.#end(undefined, true);
    this.#unread.length = 0;
    this.#answerReader();
  }
}

/** `metrics` counts the subscribers a backlog ends (the pushed ones' bound is here, not in the gate). */
export function useSharedSubscriptionExecution(metrics: Metrics): Plugin {
  return {
    onSubscribe({ setSubscribeFn, subscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const operation = getOperationAST(args.document, args.operationName);
        const variables = operation && getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
        // Anything unusual (no operation, variables refused) takes the usual path, which answers it as usual.
        if (!operation || operation.operation !== 'subscription' || variables?.coerced === undefined) return subscribeFn(args);
        const source = await createSourceEventStream(args);
        // The subscription's scopes are checked when it starts; scope-auth's memo of them (about 1.3 KB) is not kept for
        // its whole life. A field with scopes of its own (Event.deliveryHeaders) rebuilds it for the context that
        // executes, and that one keeps it.
        RequestCache.clearForContext(args.contextValue as GraphQLContext);
        if (!(Symbol.asyncIterator in source)) return source;
        let documentId = documentIds.get(args.document);
        if (documentId === undefined) documentIds.set(args.document, (documentId = nextDocumentId++));
        const key = JSON.stringify([documentId, args.operationName ?? null, variables.coerced, scopeOf(args.contextValue as GraphQLContext)]);
        const attach = pushSideOf<unknown>(source);
        const frames = readyFramesOf(args.rootValue);
        if (attach !== undefined && frames !== undefined) {
          const run = (payload: unknown) => execute({ ...args, rootValue: payload }) as ExecutionResult | Promise<ExecutionResult>;
          frames.writesOwnFrames = true;
          return new PushedSubscription(
            attach,
            frames,
            (value) => pushedExecution(value, key, run),
            locatedAt(operation),
            (what) => backlogExceeded(metrics, what),
          );
        }
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
