// What every process role plugs into its services: the queues (payment sync schedule, webhook relay), the
// live feed (Redis pub/sub for subscriptions) and the webhook HTTP client. One place, so the API and the worker cannot wire them differently.
import { Redis } from 'ioredis';
import type { Config } from '../platform/config.ts';
import { createWebhookSender } from '../modules/events/index.ts';
import type { Logger } from '../platform/logger.ts';
import { createLiveFeed, type LiveFeed } from '../api/live-feed.ts';
import type { ServiceAdapters } from '../modules/services.ts';
import { PaymentSyncQueue } from '../modules/processor-sync/index.ts';
import { WebhookQueue } from '../modules/events/index.ts';
import { createRoutingSignals } from '../modules/routing/index.ts';

export interface ProcessAdapters extends ServiceAdapters {
  webhookQueue: WebhookQueue;
  liveFeed: LiveFeed;
  close(): Promise<void>;
}

/** `clock`: the routing signals' and balances' (tests); the system clock by default. */
export function createAdapters(config: Config, logger: Logger, clock?: () => number): ProcessAdapters {
  const paymentSyncQueue = new PaymentSyncQueue(config, logger);
  const webhookQueue = new WebhookQueue(config, logger);
  const webhookSender = createWebhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS, concurrency: config.WEBHOOK_CONCURRENCY });
  const liveFeed = createLiveFeed(config, logger);
  // Routing's reads and writes fail at once while Redis is away (no offline queue), and within
  // ROUTING_REDIS_TIMEOUT_MS when it is connected but does not answer: payments route without them.
  const routingRedis = new Redis(config.ROUTING_REDIS_URL ?? config.REDIS_URL, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: config.ROUTING_REDIS_TIMEOUT_MS,
  });
  routingRedis.on('error', (error) => logger.warn({ err: error }, 'routing redis connection error'));
  return {
    paymentSyncScheduler: paymentSyncQueue,
    eventRelay: webhookQueue,
    webhookSender,
    livePublisher: liveFeed,
    routingSignals: createRoutingSignals(routingRedis, config),
    clock,
    liveFeed,
    webhookQueue,
    close: async () => {
      webhookSender.close();
      await liveFeed.close();
      routingRedis.disconnect();
      // Closing sends QUIT; with Redis unreachable that fails, and there is nothing left to flush anyway.
      const closed = await Promise.allSettled([paymentSyncQueue.close(), webhookQueue.close()]);
      for (const result of closed) if (result.status === 'rejected') logger.warn({ err: result.reason }, 'closing a queue failed; its connection is dropped');
    },
  };
}
