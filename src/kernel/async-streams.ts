// Pulling one async stream into another until either ends: the plumbing every live stream shares (the
// feed, the subscription gate, the event watch), so each stops listening the moment its reader leaves.

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
  const stopped: Promise<typeof STOPPED> = Promise.resolve(stop).then(() => STOPPED);
  try {
    for (let next = pending; ; next = iterator.next()) {
      const result = await Promise.race([next, stopped]);
      if (result === STOPPED || result.done) return;
      await take(result.value);
    }
  } finally {
    await iterator.return?.();
  }
}
