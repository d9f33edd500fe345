// Pulling one async stream into another until either ends: the plumbing every live stream shares (the
// feed, the subscription gate, the event watch), so each stops listening the moment its reader leaves.
// And the push side of a live stream, for fan-out (docs/subscriptions.md, "Fan-out").

const STOPPED: unique symbol = Symbol('stopped');

/**
 * Pulls `iterator` (starting from `pending`, a next() already asked for, if any) and hands each value to
 * `take`, until the source ends, `stop` settles, or `take` throws; then returns the iterator, which ends
 * its subscription at once even while a next() is still waiting.
 */
export async function drain<T>(
  iterator: AsyncIterator<T>,
  stop: PromiseLike<unknown>,
  take: (value: T) => unknown,
  pending: Promise<IteratorResult<T>> = iterator.next(),
): Promise<void> {
  // One reaction on `stop` for the whole stream, not one per value: Promise.race([next, stop]) would leave
  // a reaction (holding that value's result) on `stop` for every value until the stream ends.
  let wake: ((stopped: typeof STOPPED) => void) | null = null;
  let stopped = false;
  void Promise.resolve(stop).then(() => {
    stopped = true;
    wake?.(STOPPED);
  });
  try {
    for (let next = pending; ;) {
      const result = await new Promise<IteratorResult<T> | typeof STOPPED>((resolve, reject) => {
        wake = resolve;
        next.then(resolve, reject);
      });
      wake = null;
      if (result === STOPPED || result.done) return;
      await take(result.value);
      // Stopped during take: no next() is asked for, which nothing would observe (its rejection unhandled).
      if (stopped) return;
      next = iterator.next();
    }
  } finally {
    await iterator.return?.();
  }
}

/** Where a live stream pushes its values, synchronously and in order. */
export interface PushSink<T> {
  next(value: T): void;
  /** The stream ended, with an error for its reader or none; nothing comes after. */
  end(error?: Error): void;
}

/** Starts pushing to `sink`; the function returned stops it (listening included), and may be called more than once. */
export type Attach<T> = (sink: PushSink<T>) => () => void;

/** The key under which a live stream offers its push side. */
export const PUSH: unique symbol = Symbol('push');

/**
 * A live stream that can also push its values to one reader instead of being iterated. Fan-out to many subscribers
 * goes through it: a value is handed from the feed to each subscriber's socket by plain calls, where iterating costs
 * every subscriber several promises per value.
 */
export type PushStream<T> = AsyncIterable<T> & { readonly [PUSH]?: Attach<T> };

/** `stream` offering `attach` as its push side. */
export function withPush<T>(stream: AsyncIterable<T>, attach: Attach<T>): PushStream<T> {
  return Object.assign(stream, { [PUSH]: attach });
}

/** The push side of `stream`, when it has one. */
export function pushSideOf<T>(stream: unknown): Attach<T> | undefined {
  return stream !== null && typeof stream === 'object' && PUSH in stream ? (stream as { [PUSH]: Attach<T> })[PUSH] : undefined;
}
