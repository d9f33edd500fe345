// Prometheus metrics of one process (a registry per app, so several apps in one test process don't collide).
// Every label takes its values from a bounded set (docs/operations.md, "Metrics"): route patterns, schema
// field names, connector names and flows, the decline catalog, error codes, outcome classes.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a fast in-memory answer to a processor call near its timeout. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route, method and status.',
      labelNames: ['route', 'method', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route.',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    graphqlDuration: new Histogram({
      name: 'graphql_operation_duration_seconds',
      help: "Execution time of GraphQL operations by root field (the schema's name, never the client's operation name).",
      labelNames: ['operation', 'type'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    graphqlErrors: new Counter({
      name: 'graphql_errors_total',
      help: 'Errors in GraphQL answers by root field and catalog code.',
      labelNames: ['operation', 'code'] as const,
      registers,
    }),
    connectorDuration: new Histogram({
      name: 'connector_call_duration_seconds',
      help: 'Processor call latency by connector and flow.',
      labelNames: ['connector', 'flow'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    connectorCalls: new Counter({
      name: 'connector_calls_total',
      help: 'Processor calls by connector, flow and outcome (success, declined, error, timeout).',
      labelNames: ['connector', 'flow', 'outcome'] as const,
      registers,
    }),
    connectorDeclines: new Counter({
      name: 'connector_declines_total',
      help: 'Declines by connector and decline catalog code.',
      labelNames: ['connector', 'code'] as const,
      registers,
    }),
    webhookDuration: new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Webhook POST latency (until the answer, or the failure).',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook POSTs by outcome class: 2xx, 3xx, 4xx, 5xx, timeout, network.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    readCacheReads: new Counter({
      name: 'read_cache_reads_total',
      help: 'Reads of API keys, business profiles and connector accounts: hit (from the read cache), miss (loaded), bypass (the cache is not serving).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    subscriptionsDropped: new Counter({
      name: 'graphql_subscriptions_dropped_total',
      help: 'Subscription streams this process ended: backlog (unread results), revoked (key revoked), refused (a bound was reached).',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** A gauge whose value is read when /metrics is scraped (no bookkeeping on the hot path). */
export function gaugeOnScrape<Label extends string>(
  metrics: Metrics,
  definition: { name: string; help: string; labelNames?: readonly Label[] },
  read: (gauge: Gauge<Label>) => Promise<void> | void,
): void {
  new Gauge<Label>({
    ...definition,
    labelNames: definition.labelNames ?? [],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      await read(this);
    },
  });
}

/** Seconds since `started` (process.hrtime.bigint()). */
export const secondsSince = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e9;
