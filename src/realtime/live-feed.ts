// Live updates across processes: every committed payment change and every new event is published on Redis
// pub/sub (through Yoga's PubSub and its Redis event target), so a subscriber connected to any API process
// sees changes made by any API or worker process. Publishing happens after commit, and never fails the
// change that caused it: a subscriber that missed something catches up from the database (`after`).
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from 'graphql-yoga';
import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { CommittedEvent, LivePublisher } from '../services/events/event-outbox.ts';
import type { Payment } from '../services/payments/payment-store.ts';

/** JSON that keeps Dates as Dates across Redis (`{"$date": iso}`), so a payload resolves like a database row. */
const serializer = {
  stringify: (value: unknown) =>
    JSON.stringify(value, function replace(this: Record<string, unknown>, key: string, json: unknown) {
      const raw = this[key];
      return raw instanceof Date ? { $date: raw.toISOString() } : json;
    }),
  parse: (text: string) =>
    JSON.parse(text, (_key, value: unknown) =>
      value !== null && typeof value === 'object' && Object.keys(value).length === 1 && typeof (value as { $date?: unknown }).$date === 'string'
        ? new Date((value as { $date: string }).$date)
        : value,
    ),
};

export interface LiveFeed extends LivePublisher {
  /** The payment as each of its changes commits. */
  paymentChanges(paymentId: string): AsyncIterable<Payment>;
  /** The merchant's new events in one mode, as they commit. */
  events(merchantId: string, mode: string): AsyncIterable<CommittedEvent>;
  close(): Promise<void>;
}

export function createLiveFeed(config: Config, logger: Logger): LiveFeed {
  const publishRedis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  const subscribeRedis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  for (const client of [publishRedis, subscribeRedis]) client.on('error', (error) => logger.warn({ err: error }, 'live feed: redis error'));
  const lost = (what: string) => (error: unknown) => logger.warn({ err: error }, `live feed: ${what} failed; subscribers catch up from the database`);
  // The event target fires these and forgets them: their failures are caught here, never unhandled.
  const publishClient = { publish: (channel: string, message: string) => publishRedis.publish(channel, message).catch(lost('publish')) };
  const subscribeClient = {
    on: (name: 'message', listener: (channel: string, message: string) => void) => subscribeRedis.on(name, listener),
    subscribe: (channel: string) => subscribeRedis.subscribe(channel).catch(lost('subscribe')),
    unsubscribe: (channel: string) => subscribeRedis.unsubscribe(channel).catch(lost('unsubscribe')),
  };
  const eventTarget = createRedisEventTarget({ publishClient: publishClient as unknown as Redis, subscribeClient: subscribeClient as unknown as Redis, serializer });
  const pubSub = createPubSub<Record<string, [string, unknown]>>({ eventTarget });
  // Channels carry the deployment's prefix, like every other Redis key of the service.
  const paymentTopic = `${config.REDIS_PREFIX}:live:payment`;
  const eventsTopic = `${config.REDIS_PREFIX}:live:events`;
  return {
    paymentChanged: (payment) => pubSub.publish(paymentTopic, payment.id, payment),
    eventCreated: (event) => pubSub.publish(eventsTopic, `${event.merchantId}:${event.mode}`, event),
    paymentChanges: (paymentId) => pubSub.subscribe(paymentTopic, paymentId) as AsyncIterable<Payment>,
    events: (merchantId, mode) => pubSub.subscribe(eventsTopic, `${merchantId}:${mode}`) as AsyncIterable<CommittedEvent>,
    close: async () => {
      publishRedis.disconnect();
      subscribeRedis.disconnect();
    },
  };
}
