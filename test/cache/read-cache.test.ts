// The read cache on its own (docs/architecture.md, "Read cache"), against a Redis of the test's own behind a proxy:
// what it keeps and for how long, that an invalidation from another cache evicts, that a load racing an invalidation
// keeps nothing, and that it reads the database (here: calls the loader) whenever its subscription connection is
// down or silent, until it is subscribed again.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReadCache, type ReadCacheOptions } from '../../src/platform/cache/read-cache.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMetrics } from '../../src/platform/http/metrics.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

let redis: OwnRedis;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
const caches: ReadCache[] = [];
const channel = `cache-test:${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  redis = await startOwnRedis();
  proxy = await tcpProxy(Number(new URL(redis.url).port));
});
afterEach(async () => {
  await Promise.all(caches.splice(0).map((cache) => cache.close()));
});
afterAll(async () => {
  await proxy?.close();
  await redis?.stop();
});

async function cacheOf(options: Partial<ReadCacheOptions> = {}): Promise<ReadCache> {
  const cache = new ReadCache({
    redisUrl: redis.url,
    channel,
    maxEntries: 100,
    ttlMs: 60_000,
    logger: createLogger('silent'),
    metrics: createMetrics(),
    ...options,
  });
  caches.push(cache);
  await vi.waitFor(() => expect(cache.serving).toBe(true), { timeout: 10_000, interval: 20 });
  return cache;
}

/** A loader that answers `value` (tagged `tags`) and counts its calls. */
function loader<T>(value: T, tags: readonly string[] | null = ['t']) {
  const load = vi.fn(async () => ({ value, tags }));
  return load;
}

describe('ReadCache', () => {
  it('serves a loaded value again without loading it, but never keeps a miss (null tags)', async () => {
    const cache = await cacheOf();
    const load = loader({ n: 1 });
    expect(await cache.read('a', load)).toEqual({ n: 1 });
    expect(await cache.read('a', load)).toEqual({ n: 1 });
    expect(load).toHaveBeenCalledTimes(1);
    const miss = loader(null, null);
    await cache.read('b', miss);
    await cache.read('b', miss);
    expect(miss).toHaveBeenCalledTimes(2);
  });

  it('evicts at once in the invalidating process and, through Redis, in another one', async () => {
    const [writer, reader] = [await cacheOf(), await cacheOf()];
    const [mine, theirs, other] = [loader(1, ['x']), loader(2, ['x']), loader(3, ['y'])];
    for (let round = 0; round < 2; round += 1) {
      await writer.read('a', mine);
      await reader.read('a', theirs);
      await reader.read('b', other);
    }
    await writer.invalidate(['x']);
    await writer.read('a', mine);
    expect(mine).toHaveBeenCalledTimes(2); // synchronously, in the writer
    await vi.waitFor(
      async () => {
        await reader.read('a', theirs);
        expect(theirs.mock.calls.length).toBeGreaterThan(1);
      },
      { timeout: 10_000, interval: 20 },
    );
    await reader.read('b', other);
    expect(other).toHaveBeenCalledTimes(1); // another tag's entry stays
  });

  it('keeps nothing that was loaded while an invalidation came', async () => {
    const cache = await cacheOf();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = vi.fn(async () => {
      await held;
      return { value: 'old', tags: ['x'] };
    });
    const reading = cache.read('a', slow);
    await cache.invalidate(['x']);
    release();
    expect(await reading).toBe('old');
    const fresh = loader('new', ['x']);
    expect(await cache.read('a', fresh)).toBe('new');
  });

  it('keeps at most maxEntries, dropping the least recently used, and each for ttlMs at most', async () => {
    const cache = await cacheOf({ maxEntries: 2 });
    const [a, b, c] = [loader('a'), loader('b'), loader('c')];
    await cache.read('a', a);
    await cache.read('b', b);
    await cache.read('a', a); // a is now the most recently used
    await cache.read('c', c); // b goes
    await cache.read('a', a);
    await cache.read('b', b);
    expect([a.mock.calls.length, b.mock.calls.length]).toEqual([1, 2]);

    const short = await cacheOf({ ttlMs: 50 });
    const d = loader('d');
    await short.read('d', d);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await short.read('d', d);
    expect(d).toHaveBeenCalledTimes(2);
  });

  it('with ttlMs 0 keeps nothing, yet still tells the other processes what it invalidates', async () => {
    const cache = new ReadCache({ redisUrl: redis.url, channel, maxEntries: 100, ttlMs: 0, logger: createLogger('silent'), metrics: createMetrics() });
    caches.push(cache);
    const load = loader('a');
    await cache.read('a', load);
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(2);
    expect(cache.serving).toBe(false);
    const other = await cacheOf();
    const otherLoad = loader('b');
    await other.read('b', otherLoad);
    await cache.invalidate(['t']);
    await vi.waitFor(
      async () => {
        await other.read('b', otherLoad);
        expect(otherLoad).toHaveBeenCalledTimes(2);
      },
      { timeout: 10_000, interval: 20 },
    );
  });

  it.each([
    { drop: 'cut', how: (p: typeof proxy) => (p.refuse(true), p.cut()), restore: (p: typeof proxy) => p.refuse(false) },
    { drop: 'silent', how: (p: typeof proxy) => p.silence(), restore: null },
  ])('reads the database while its subscription connection is $drop, and caches again once subscribed', async ({ how, restore }) => {
    const { port } = proxy;
    const cache = await cacheOf({ redisUrl: `redis://127.0.0.1:${port}` });
    const load = loader('a');
    await cache.read('a', load);
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(1);
    how(proxy);
    await vi.waitFor(() => expect(cache.serving).toBe(false), { timeout: 15_000, interval: 20 });
    await cache.read('a', load);
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(3); // bypassed, and what was cached before is gone
    if (restore === null) return;
    restore(proxy);
    await vi.waitFor(() => expect(cache.serving).toBe(true), { timeout: 15_000, interval: 20 });
    await cache.read('a', load);
    await cache.read('a', load);
    expect(load).toHaveBeenCalledTimes(4);
  });
});
