// Reads by id batched per GraphQL request: a field resolved for every item of a list (a payment's routing
// accounts, a connector account's health) would otherwise cost one query or round trip per item.
import type { GraphQLContext } from './context.ts';

/** Loads one value per id (missing ids: none); each id is read once per request. */
export type RequestLoader<Value> = (context: GraphQLContext, id: string) => Promise<Value | null>;

/**
 * A loader whose ids, asked for while a request's resolvers run, are read with one call of `load` (after the
 * current round of resolvers: the next macrotask), each id once; the results are kept for the request, or with
 * `keep: 'batch'` for that round only (a subscription's context lives as long as it does: each event is a round,
 * and a value that can change, such as a signing key, is read again for the next one).
 */
export function requestLoader<Value>(
  load: (context: GraphQLContext, ids: string[]) => Promise<ReadonlyMap<string, Value>>,
  { keep = 'request' }: { keep?: 'request' | 'batch' } = {},
): RequestLoader<Value> {
  const loaders = new WeakMap<GraphQLContext, (id: string) => Promise<Value | null>>();
  return (context, id) => {
    let loader = loaders.get(context);
    if (loader === undefined) {
      loader = batching((ids) => load(context, ids), keep === 'batch');
      loaders.set(context, loader);
    }
    return loader(id);
  };
}

interface Waiting<Value> {
  resolve: (value: Value) => void;
  reject: (error: unknown) => void;
}

function batching<Value>(load: (ids: string[]) => Promise<ReadonlyMap<string, Value>>, forgetAfterBatch: boolean): (id: string) => Promise<Value | null> {
  const loaded = new Map<string, Promise<Value | null>>();
  let batch: Map<string, Waiting<Value | null>> | null = null;
  return (id) => {
    const known = loaded.get(id);
    if (known) return known;
    if (batch === null) {
      const current = new Map<string, Waiting<Value | null>>();
      batch = current;
      setImmediate(() => {
        batch = null;
        if (forgetAfterBatch) current.forEach((_waiting, key) => loaded.delete(key));
        load([...current.keys()]).then(
          (values) => current.forEach((waiting, key) => waiting.resolve(values.get(key) ?? null)),
          (error: unknown) => current.forEach((waiting) => waiting.reject(error)),
        );
      });
    }
    const pending = batch;
    const value = new Promise<Value | null>((resolve, reject) => pending.set(id, { resolve, reject }));
    loaded.set(id, value);
    return value;
  };
}
