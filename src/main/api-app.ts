// Composes one API process: database, Redis, the queues, services, GraphQL and the HTTP server.
import { Redis } from 'ioredis';
import type { Config } from '../platform/config.ts';
import { checkPostgres, checkRedis } from '../platform/db/reachability.ts';
import { SubscriptionGate } from '../api/subscription-gate.ts';
import { createDocumentCache, createGraphQLServer } from '../api/yoga.ts';
import { listen, reachableHost } from '../platform/http/listen.ts';
import { attachGraphQLWebSocket } from '../api/graphql-ws.ts';
import { createHttpServer } from '../api/http-server.ts';
import type { Logger } from '../platform/logger.ts';
import { createServiceContext } from './service-context.ts';
import type { ServiceContext } from '../platform/context.ts';
import { createServices, type Services } from '../modules/services.ts';
import { RateLimits } from '../platform/rate-limits.ts';
import { createAdapters } from './adapters.ts';
import { registerCircuitGauge } from '../modules/routing/index.ts';
import { registerWebhookQueueGauges } from '../modules/events/index.ts';

export interface ApiApp {
  url: string;
  services: Services;
  context: ServiceContext;
  close: () => Promise<void>;
}

export interface ApiOptions {
  /** The routing signals' and balances' clock (milliseconds): tests pass theirs to cross a circuit's cool-down, or a settlement date, without waiting. */
  clock?: () => number;
}

export async function startApi(config: Config, logger: Logger, options: ApiOptions = {}): Promise<ApiApp> {
  await checkPostgres(config.DATABASE_URL);
  await checkRedis(config.REDIS_URL);
  const context = createServiceContext(config, logger);
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  // The API only enqueues (a payment's sync schedule, committed events); worker processes run the jobs.
  const adapters = createAdapters(config, logger, options.clock);
  const services = createServices(context, adapters);
  const { metrics } = context;
  registerCircuitGauge(metrics, context.db, services.routing);
  registerWebhookQueueGauges(metrics, context.db);
  const gate = new SubscriptionGate(config, services, logger, metrics);
  const limits = new RateLimits(redis, config);
  const documents = createDocumentCache();
  const yoga = createGraphQLServer({ config, services, logger, db: context.db, live: adapters.liveFeed, gate, limits, metrics, documents });
  const server = createHttpServer({
    config,
    documents,
    logger,
    metrics,
    yoga,
    services,
    limits,
    readiness: async () => {
      await context.db.$queryRaw`SELECT 1`;
      await redis.ping();
    },
  });
  const webSockets = attachGraphQLWebSocket({ server, yoga, services, limits, config, logger, metrics });
  server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
  const port = await listen(server, config.PORT, config.HOST);
  const url = `http://${reachableHost(config.HOST)}:${port}`;
  context.publicUrl = config.PUBLIC_URL ?? url;
  return {
    url,
    services,
    context,
    close: async () => {
      // Stop accepting, let in-flight requests finish (bounded), then release connections.
      gate.close();
      await webSockets.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = setTimeout(() => server.closeAllConnections(), 10_000).unref();
      await closed;
      clearTimeout(deadline);
      await adapters.close();
      await context.db.$disconnect();
      await context.cache.close();
      redis.disconnect();
    },
  };
}
