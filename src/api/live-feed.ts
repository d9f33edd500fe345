// Live updates across processes: every committed payment change (a creation to dashboards only) and every new
// event is published on Redis pub/sub (through Yoga's PubSub and its Redis event target), so a subscriber connected
// to any API process sees changes made by any API or worker process. Publishing happens after commit, and never
// fails the change that caused it: a subscriber that missed something catches up from the database (`after`).
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { Repeater } from '@repeaterjs/repeater';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import { createSubscriberConnection } from '../platform/redis-subscriber.ts';
import { AppError } from '../kernel/errors.ts';
import { withPush, type Attach, type PushStream } from '../kernel/async-streams.ts';
import type { LiveEvents, LivePublisher, WrittenEvent } from '../modules/events/index.ts';
import type { Payment, PaymentLivePublisher } from '../modules/payments/index.ts';

/**
 * The tag of a Date in a payload. It starts with NUL, which no stored text may contain (PostgreSQL
 * refuses it, and the API refuses it in every input), so merchant metadata can never look like a Date.
 */
const DATE_TAG = '\u0000date';

/** Payloads already serialized: a payment's change is published on two channels, serialized once (a published payload is never changed afterwards: each commit publishes objects of its own). */
const serialized = new WeakMap<object, string>();

/**
 * `value` with each Date replaced by its tag, copied: JSON.stringify then takes its fast path, where a replacer
 * function would be called back for every key (28 against 20 µs for a payment).
 */
function tagDates(value: unknown): unknown {
  if (value instanceof Date) return { [DATE_TAG]: value.toISOString() };
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(tagDates);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value; // serialized by its own toJSON
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = tagDates((value as Record<string, unknown>)[key]);
  return copy;
}

/**
 * `value` (just parsed) with each Date's tag replaced by the Date, in place: faster than a reviver (34 against
 * 15 µs for a payment). Only a tag is ever replaced, and no input can hold one, so no other key is assigned.
 */
function untagDates(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const tag = (value as Record<string, unknown>)[DATE_TAG];
  if (typeof tag === 'string') return new Date(tag);
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const inner = object[key];
    const revived = untagDates(inner);
    if (revived !== inner) object[key] = revived;
  }
  return value;
}

/** JSON that keeps Dates as Dates across Redis, so a payload resolves like a database row. */
const serializer = {
  stringify: (value: unknown) => {
    const known = value !== null && typeof value === 'object' ? serialized.get(value) : undefined;
    if (known !== undefined) return known;
    const json = JSON.stringify(tagDates(value));
    if (value !== null && typeof value === 'object') serialized.set(value, json);
    return json;
  },
  parse: (text: string) => untagDates(JSON.parse(text)),
};

/**
 * The live feed's topics. A channel is `<REDIS_PREFIX>:<topic>:<id>`, under the deployment's prefix like every other
 * Redis key of the service. Events travel as whole rows (modules/events/outbox.ts, WrittenEvent), on a topic of their
 * own name: a process of a release that published a shorter notice on `live:events` is not heard by one that takes
 * what it hears as the whole row.
 */
export const LIVE_TOPICS = { payment: 'live:payment', profilePayments: 'live:profile-payments', events: 'live:event-rows' } as const;

/**
 * Publications sent and not yet answered, at most (about 2 KB each): a Redis connected but stalled would otherwise hold
 * every one in the API's memory until it answers or the connection drops.
 */
export const MAX_UNANSWERED_PUBLICATIONS = 10_000;

export interface LiveFeed extends LivePublisher, PaymentLivePublisher, LiveEvents {
  /** The payment as each of its changes commits. */
  paymentChanges(paymentId: string): PushStream<Payment>;
  /** Every payment of a profile in one mode as each change of it commits, its creation included (dashboards). */
  profilePaymentChanges(profileId: string, mode: Payment['mode']): PushStream<Payment>;
  /** Publications sent and not answered yet (at most MAX_UNANSWERED_PUBLICATIONS). */
  unansweredPublications(): number;
  close(): Promise<void>;
}

export function createLiveFeed(config: Config, logger: Logger): LiveFeed {
  // Auto-pipelined: the publications of one turn of the event loop (a payment's change on two channels, its
  // event, other requests' at the same moment) go out in one write instead of a system call each.
  const publishRedis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, enableAutoPipelining: true });
  const subscribeRedis = createSubscriberConnection(config.REDIS_URL);
  for (const client of [publishRedis, subscribeRedis]) client.on('error', (error) => logger.warn({ err: error }, 'live feed: redis error'));
  const lost = (what: string) => (error: unknown) => logger.warn({ err: error }, `live feed: ${what} failed; subscribers catch up from the database`);

  // While the subscriber connection is down, publications are lost: every live stream ends with a
  // retryable error, so its client reconnects (with `after`) and catches up, rather than missing them.
  const interruptions = new Set<(error: Error) => void>();
  const interruptAll = (message: string) => {
    for (const interrupt of [...interruptions]) interrupt(new AppError('SERVICE_UNAVAILABLE', message));
  };
  subscribeRedis.on('close', () => interruptAll('The live feed lost its connection to Redis; subscribe again (with `after`) to catch up.'));

  // A Redis connected but not answering keeps every publication queued in this process, awaiting its answer: past
  // MAX_UNANSWERED_PUBLICATIONS they are dropped instead, until Redis answers one again. Dropping ends this process's
  // live streams as a lost connection does, and those started meanwhile at once, as they would miss publications.
  let unanswered = 0;
  let dropping = false;
  const stalled = 'The live feed’s Redis is not answering; subscribe again (with `after`) to catch up.';
  const publish = (channel: string, message: string) => {
    if (unanswered >= MAX_UNANSWERED_PUBLICATIONS) {
      if (!dropping) {
        dropping = true;
        logger.warn({ unanswered }, 'live feed: Redis is not answering; publications are dropped until it does');
        interruptAll(stalled);
      }
      return;
    }
    unanswered += 1;
    // The event target fires these and forgets them: their failures are caught here, never unhandled.
    void publishRedis
      .publish(channel, message)
      .catch(lost('publish'))
      .finally(() => {
        unanswered -= 1;
        dropping = false; // answered (or failed): Redis is heard from again
      });
  };
  const publishClient = { publish };
  const subscribeClient = {
    on: (name: 'message', listener: (channel: string, message: string) => void) => subscribeRedis.on(name, listener),
    subscribe: (channel: string) => subscribeRedis.subscribe(channel).catch(lost('subscribe')),
    unsubscribe: (channel: string) => subscribeRedis.unsubscribe(channel).catch(lost('unsubscribe')),
  };
  const eventTarget = createRedisEventTarget({
    publishClient: publishClient as unknown as Redis,
    subscribeClient: subscribeClient as unknown as Redis,
    serializer,
  });
  const pubSub = createPubSub<Record<string, [string, unknown]>>({ eventTarget });

  // A subscriber's listener on the event target pushes each payload to it by a plain call (the push side, for
  // fan-out: docs/subscriptions.md); iterated, it is one stream straight from that listener, no inner stream to drain.
  const listen = <T>(topic: string, id: string): PushStream<T> => {
    const channel = `${topic}:${id}`;
    const attach: Attach<T> = (sink) => {
      let listening = true;
      const listener = (event: Event) => sink.next((event as CustomEvent<T>).detail);
      const detach = () => {
        if (!listening) return;
        listening = false;
        eventTarget.removeEventListener(channel, listener);
        interruptions.delete(interrupt);
      };
      const interrupt = (error: Error) => {
        detach();
        sink.end(error);
      };
      interruptions.add(interrupt);
      eventTarget.addEventListener(channel, listener);
      // Started while publications are dropped: ended as soon as its caller holds it.
      if (dropping) queueMicrotask(() => listening && interrupt(new AppError('SERVICE_UNAVAILABLE', stalled)));
      return detach;
    };
    const iterated = new Repeater<T>(async (push, stop) => {
      const detach = attach({ next: (value) => void push(value), end: (error) => stop(error) });
      try {
        await stop;
      } finally {
        detach();
      }
    });
    return withPush(iterated, attach);
  };
  const paymentTopic = `${config.REDIS_PREFIX}:${LIVE_TOPICS.payment}`;
  const profilePaymentsTopic = `${config.REDIS_PREFIX}:${LIVE_TOPICS.profilePayments}`;
  const eventsTopic = `${config.REDIS_PREFIX}:${LIVE_TOPICS.events}`;
  return {
    paymentChanged: (payment) => {
      // A payment's creation (version 0: every later write bumps it) goes to dashboards only. Its own channel has no
      // subscriber that has not read this state already: paymentUpdated reads the payment before it subscribes, and
      // its id is known from the answer of the request that creates it (sent after this) or from reading it.
      if (payment.version > 0) pubSub.publish(paymentTopic, payment.id, payment);
      pubSub.publish(profilePaymentsTopic, `${payment.profileId}:${payment.mode}`, payment);
    },
    eventCreated: (event) => pubSub.publish(eventsTopic, `${event.merchantId}:${event.mode}`, event),
    paymentChanges: (paymentId) => listen<Payment>(paymentTopic, paymentId),
    profilePaymentChanges: (profileId, mode) => listen<Payment>(profilePaymentsTopic, `${profileId}:${mode}`),
    events: (merchantId, mode) => listen<WrittenEvent>(eventsTopic, `${merchantId}:${mode}`),
    // Redis answers a connection's commands in order: a PING answered means every SUBSCRIBE sent before it is in effect.
    subscribed: async () => {
      await new Promise((resolve) => setImmediate(resolve)); // let subscriptions just started send their SUBSCRIBE
      await subscribeRedis.ping();
    },
    unansweredPublications: () => unanswered,
    close: async () => {
      publishRedis.disconnect();
      subscribeRedis.disconnect();
    },
  };
}
