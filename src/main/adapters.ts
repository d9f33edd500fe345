// What every process role plugs into its services: the queues (payment sync schedule, webhook relay), the
// live feed (Redis pub/sub for subscriptions) and the webhook HTTP client. One place, so the API and the worker cannot wire them differently.
import type { Config } from '../platform/config.ts';
import { createWebhookSender } from '../modules/events/index.ts';
import type { Logger } from '../platform/logger.ts';
import { createLiveFeed, type LiveFeed } from '../api/live-feed.ts';
import type { ServiceAdapters } from '../modules/services.ts';
import { PaymentSyncQueue } from '../modules/processor-sync/index.ts';
import { WebhookQueue } from '../modules/events/index.ts';

export interface ProcessAdapters extends ServiceAdapters {
  webhookQueue: WebhookQueue;
  liveFeed: LiveFeed;
  close(): Promise<void>;
}

export function createAdapters(config: Config, logger: Logger): ProcessAdapters {
  const paymentSyncQueue = new PaymentSyncQueue(config, logger);
  const webhookQueue = new WebhookQueue(config, logger);
  const webhookSender = createWebhookSender({ timeoutMs: config.WEBHOOK_TIMEOUT_MS });
  const liveFeed = createLiveFeed(config, logger);
  return {
    paymentSyncScheduler: paymentSyncQueue,
    eventRelay: webhookQueue,
    webhookSender,
    livePublisher: liveFeed,
    liveFeed,
    webhookQueue,
    close: async () => {
      webhookSender.close();
      await liveFeed.close();
      // Closing sends QUIT; with Redis unreachable that fails, and there is nothing left to flush anyway.
      const closed = await Promise.allSettled([paymentSyncQueue.close(), webhookQueue.close()]);
      for (const result of closed) if (result.status === 'rejected') logger.warn({ err: result.reason }, 'closing a queue failed; its connection is dropped');
    },
  };
}
