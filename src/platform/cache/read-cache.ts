// An in-process cache of reads that repeat on every request (API keys, business profiles, connector accounts),
// invalidated across processes through Redis pub/sub (docs/architecture.md, "Read cache"). Correctness first: a
// writer evicts its own process's entries and publishes after its transaction commits; every process clears its
// cache and reads the database while its subscription is not in place, since it could miss invalidations then.
import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import { gaugeOnScrape, type Metrics } from '../http/metrics.ts';
import { createSubscriberConnection } from '../redis-subscriber.ts';

export interface ReadCacheOptions {
  redisUrl: string;
  /** The invalidation channel, with the deployment's Redis prefix. */
  channel: string;
  maxEntries: number;
  /** A backstop for writes made outside the service; 0 turns the cache off (every read goes to the database). */
  ttlMs: number;
  logger: Logger;
  metrics: Metrics;
}

/** How often the subscription connection must answer a PING, and within how long. */
const HEALTH_INTERVAL_MS = 2_000;
const HEALTH_TIMEOUT_MS = 1_000;

interface Entry {
  value: unknown;
  tags: readonly string[];
  expiresAt: number;
}

/** What a load answers: the value, and the tags whose invalidation evicts it; null tags: not to be kept (a miss). */
export interface Cached<T> {
  value: T;
  tags: readonly string[] | null;
}

export class ReadCache {
  // A Map keeps insertion order: re-inserting on a hit makes its first key the least recently used.
  private readonly entries = new Map<string, Entry>();
  private readonly keysByTag = new Map<string, Set<string>>();
  /** Bumped by every invalidation and by every change of `live`: a load that saw it change does not store what it read. */
  private epoch = 0;
  /** True while the subscription is in place: only then can entries be trusted and stored. */
  private live = false;
  private closed = false;
  private readonly healthCheck: NodeJS.Timeout | undefined;
  private readonly publisher: Redis;
  private readonly subscriber: Redis | null;

  constructor(private readonly options: ReadCacheOptions) {
    gaugeOnScrape(
      options.metrics,
      { name: 'read_cache_serving', help: '1 while the read cache serves (its invalidation subscription is in place), else 0.' },
      (gauge) => gauge.set(this.live ? 1 : 0),
    );
    gaugeOnScrape(options.metrics, { name: 'read_cache_entries', help: 'Entries in the read cache.' }, (gauge) => gauge.set(this.entries.size));
    const { logger, channel } = options;
    // Publishes queue while disconnected and are retried: an invalidation is worth delivering late rather than never.
    // A process that keeps no cache (TTL 0) still publishes: the others' caches must hear of what it writes.
    this.publisher = new Redis(options.redisUrl, { maxRetriesPerRequest: 20 });
    this.publisher.on('error', (error) => logger.warn({ err: error }, 'read cache: redis error'));
    if (options.ttlMs === 0) {
      this.subscriber = null;
      this.healthCheck = undefined;
      return;
    }
    this.subscriber = createSubscriberConnection(options.redisUrl, { autoResubscribe: false });
    this.subscriber.on('error', (error) => logger.warn({ err: error }, 'read cache: redis error'));
    this.subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const tags = parseTags(message);
      if (tags === null) this.clear();
      else this.evict(tags);
    });
    this.subscriber.on('close', () => this.goOffline());
    this.subscriber.on('ready', () => {
      this.subscriber!.subscribe(channel).then(
        () => {
          if (this.closed || this.subscriber!.status !== 'ready') return;
          this.clear(); // nothing read before the subscription was in place is kept
          this.live = true;
        },
        (error: unknown) => {
          logger.warn({ err: error }, 'read cache: subscribing failed; reading the database until the connection is made again');
          this.subscriber!.disconnect(true);
        },
      );
    });
    // A connection that goes silent without closing (a partition) would keep the cache serving while it misses
    // invalidations: one that does not answer a PING in time is dropped, which clears the cache until it is back.
    this.healthCheck = setInterval(() => {
      if (!this.live) return;
      const subscriber = this.subscriber!;
      const timeout = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('no answer to PING')), HEALTH_TIMEOUT_MS).unref());
      Promise.race([subscriber.ping(), timeout]).catch((error: unknown) => {
        if (this.closed) return;
        logger.warn({ err: error }, 'read cache: the subscription connection does not answer; reconnecting, reading the database meanwhile');
        this.goOffline();
        subscriber.disconnect(true);
      });
    }, HEALTH_INTERVAL_MS).unref();
  }

  /** Whether reads are served from the cache now (the subscription is in place). */
  get serving(): boolean {
    return this.live;
  }

  /**
   * The cached value of `key`, else `load`'s (stored unless an invalidation, or a loss of the subscription, came while
   * it was loading). Never mutate what it answers: the same object serves every request until evicted.
   */
  async read<T>(key: string, load: () => Promise<Cached<T>>): Promise<T> {
    const reads = this.options.metrics.readCacheReads;
    if (!this.live) {
      reads.inc({ outcome: 'bypass' });
      return (await load()).value;
    }
    const entry = this.entries.get(key);
    const now = Date.now();
    if (entry !== undefined && entry.expiresAt > now) {
      reads.inc({ outcome: 'hit' });
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value as T;
    }
    reads.inc({ outcome: 'miss' });
    const epoch = this.epoch;
    const loaded = await load();
    if (loaded.tags !== null && this.live && this.epoch === epoch) this.store(key, loaded.value, loaded.tags, now + this.options.ttlMs);
    return loaded.value;
  }

  /**
   * Evicts every entry of `tags` here at once, then in every other process through Redis. Call it after the write's
   * transaction committed (before, another process could read the old row again and keep it). Never fails.
   */
  async invalidate(tags: readonly string[]): Promise<void> {
    if (tags.length === 0) return;
    this.evict(tags);
    try {
      await this.publisher.publish(this.options.channel, JSON.stringify(tags));
    } catch (error) {
      this.options.logger.error(
        { err: error, tags },
        'read cache: publishing an invalidation failed; other processes keep their entries until READ_CACHE_TTL_MS',
      );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.healthCheck);
    this.goOffline();
    this.subscriber?.disconnect();
    this.publisher?.disconnect();
  }

  private goOffline(): void {
    this.live = false;
    this.clear();
  }

  private clear(): void {
    this.epoch += 1;
    this.entries.clear();
    this.keysByTag.clear();
  }

  private evict(tags: readonly string[]): void {
    this.epoch += 1;
    for (const tag of tags) {
      for (const key of this.keysByTag.get(tag) ?? []) this.remove(key);
    }
  }

  private store(key: string, value: unknown, tags: readonly string[], expiresAt: number): void {
    this.remove(key);
    this.entries.set(key, { value, tags, expiresAt });
    for (const tag of tags) {
      let keys = this.keysByTag.get(tag);
      if (keys === undefined) this.keysByTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
    if (this.entries.size > this.options.maxEntries) this.remove(this.entries.keys().next().value!);
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    for (const tag of entry.tags) {
      const keys = this.keysByTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.keysByTag.delete(tag);
    }
  }
}

/** A message's tags; an unreadable message (another version's?) clears nothing by itself, so it clears everything. */
function parseTags(message: string): readonly string[] | null {
  try {
    const tags: unknown = JSON.parse(message);
    if (Array.isArray(tags) && tags.every((tag) => typeof tag === 'string')) return tags;
  } catch {
    // handled below
  }
  return null;
}
