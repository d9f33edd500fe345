// Subscription fan-out: BENCH_SUBSCRIBERS graphql-ws subscribers of one profile's paymentEvents on the API
// process, in a process of their own (bench/processes/subscribers.ts), while BENCH_PAYMENTS card payments
// (create + confirm, one event each: payment_succeeded) run through the sandbox. Latency: from an event's createdAt (set in the
// transaction that commits it) to each subscriber's receipt (p50, p99, max over every delivery). Memory: the
// API process's memory with the subscribers connected minus before, each read after full garbage
// collections (bench/lib/memory-probe.ts), per 1,000 subscriptions: live (JS heap + external) and RSS.
// Ceiling, same run: the transport alone (bench/processes/fanout.ts: Redis pub/sub to plain WebSockets, no
// GraphQL), the same number of subscribers, the same number of messages published at the service's pace.
import { Redis } from 'ioredis';
import { LIVE_TOPICS } from '../src/api/live-feed.ts';
import { CONFIRM_PAYMENT, CREATE_PAYMENT, confirmVariables, createVariables } from './lib/operations.ts';
import { Child, freePort } from './lib/processes.ts';
import type { Stack } from './lib/stack.ts';
import { ratio, round, type LatencySummary } from './lib/stats.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Stats {
  received: number;
  latencyMs: LatencySummary;
}

async function post(stack: Stack, key: string, query: string, variables: unknown) {
  const response = await fetch(`${stack.apiUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Record<string, Record<string, unknown>>; errors?: unknown };
  if (body.errors || !body.data) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
  return Object.values(body.data)[0]!;
}

const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };

/** `count` card payments, each started when due at `ratePerS` (open model) whether or not the one before has finished; the seconds they took. */
async function paymentsAtRate(stack: Stack, count: number, ratePerS: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      await sleep(started + (index * 1000) / ratePerS - performance.now());
      const created = await post(stack, stack.demo.secretKey, CREATE_PAYMENT, createVariables());
      await post(stack, stack.demo.publishableKey, CONFIRM_PAYMENT, confirmVariables(created.clientSecret as string, card));
    }),
  );
  return (performance.now() - started) / 1000;
}

/** Connects `count` subscribers to `url`; resolves once all are connected (and their subscriptions settled). */
async function subscribe(spec: { url: string; protocol: 'graphql-ws' | 'ws'; count: number; apiKey?: string; profileId?: string }) {
  const child = new Child(`subscribers (${spec.protocol})`, 'bench/processes/subscribers.ts', { args: [JSON.stringify(spec)], ipc: true });
  await child.waitFor(/subscribers connected/, 180_000);
  return child;
}

/** Waits until `expected` deliveries arrived (or `timeoutMs` passed); returns what arrived. */
async function collect(child: Child, expected: number, timeoutMs: number): Promise<Stats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await child.request<Stats>('stats');
    if (stats.received >= expected || Date.now() > deadline) return stats;
    await sleep(100);
  }
}

/**
 * Waits until the API holds exactly `count` subscriptions open, by its graphql_subscriptions_open gauge (the
 * warm-up's closed, and each of these past its subscribe resolver, its gate open), and the live feed has subscribed
 * in Redis: the payments that follow are then measured against delivery alone, never against subscriptions still
 * starting (a fixed wait was not always long enough).
 */
async function untilOpen(stack: Stack, count: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  const channels = `${stack.prefix}:${LIVE_TOPICS.events}:${stack.demo.merchantId}:*`;
  for (;;) {
    const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    const open = Number(/^graphql_subscriptions_open (\d+)/m.exec(metrics)?.[1] ?? 0);
    if (open === count && (await stack.redis.pubsub('CHANNELS', channels)).length > 0) return;
    if (Date.now() > deadline) throw new Error(`${open} of ${count} subscriptions open after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/**
 * Connects and closes a tenth of the subscribers before memory is first read: what the first subscriptions load
 * once (modules, the ORM's query engine on its first query) is not memory per subscription.
 */
async function warmUp(spec: Parameters<typeof subscribe>[0]) {
  await closeSubscribers(await subscribe({ ...spec, count: Math.max(10, Math.ceil(spec.count / 10)) }));
}

/**
 * Sends `count` events with `send` and waits until every one of `subscribers` has them, then has the subscriber process
 * forget them: the fan-out's code runs for the first time there, in the service and the ceiling alike.
 */
async function warmUpFanOut(clients: Child, subscribers: number, count: number, send: (count: number) => Promise<unknown>) {
  await send(count);
  await collect(clients, count * subscribers, 60_000);
  await clients.request('reset');
}

async function closeSubscribers(child: Child) {
  await child.request('close').catch(() => undefined);
  await Promise.race([child.exited, sleep(5_000)]);
  await child.stop();
}

export async function benchSubscriptions(stack: Stack) {
  const { subscribers, payments, paymentRate, subscriptionSandboxLatencyMs, subscriptionWarmupPayments } = stack.settings;
  await stack.start({ sandboxLatencyMs: subscriptionSandboxLatencyMs });
  const expected = payments * subscribers;

  console.log(
    `subscriptions: ${subscribers} graphql-ws subscribers, ${payments} payments started at ${paymentRate}/s, sandbox latency ${subscriptionSandboxLatencyMs} ms`,
  );
  const serviceSpec = {
    url: `${stack.apiUrl.replace(/^http/, 'ws')}/graphql`,
    protocol: 'graphql-ws',
    count: subscribers,
    apiKey: stack.demo.secretKey,
    profileId: stack.demo.profileId,
  } as const;
  await warmUp(serviceSpec);
  const serviceBefore = await stack.api!.memoryMb();
  const serviceClients = await subscribe(serviceSpec);
  let serviceStats: Stats;
  let serviceConnected: Awaited<ReturnType<Child['memoryMb']>>;
  let paymentSeconds: number;
  let serviceCpuMs: number;
  try {
    await untilOpen(stack, subscribers, 180_000);
    serviceConnected = await stack.api!.memoryMb();
    await warmUpFanOut(serviceClients, subscribers, subscriptionWarmupPayments, (count) => paymentsAtRate(stack, count, paymentRate));
    const cpuBefore = stack.api!.cpuMs();
    paymentSeconds = await paymentsAtRate(stack, payments, paymentRate);
    serviceStats = await collect(serviceClients, expected, 60_000);
    serviceCpuMs = stack.api!.cpuMs() - cpuBefore;
  } finally {
    await closeSubscribers(serviceClients);
  }
  console.log(
    `  ${serviceStats.received}/${expected} delivered; p50 ${serviceStats.latencyMs.p50} ms, p99 ${serviceStats.latencyMs.p99} ms; RSS +${round(serviceConnected.rss - serviceBefore.rss, 1)} MB; API CPU ${round(serviceCpuMs, 0)} ms`,
  );

  console.log(`subscriptions: ceiling, Redis pub/sub to ${subscribers} plain WebSockets`);
  const port = await freePort();
  const channel = `${stack.prefix}:bench-fanout`;
  const fanout = new Child('fanout', 'bench/processes/fanout.ts', {
    env: { PORT: String(port), REDIS_URL: stack.settings.redisUrl, FANOUT_CHANNEL: channel },
    preload: ['./bench/lib/memory-probe.ts'],
    nodeFlags: ['--expose-gc'],
    ipc: true,
  });
  const publisher = new Redis(stack.settings.redisUrl);
  let bareStats: Stats;
  let bareBefore: Awaited<ReturnType<Child['memoryMb']>>;
  let bareConnected: Awaited<ReturnType<Child['memoryMb']>>;
  let bareCpuMs: number;
  try {
    await fanout.waitFor(/fanout listening/);
    const bareSpec = { url: `ws://127.0.0.1:${port}/`, protocol: 'ws', count: subscribers } as const;
    await warmUp(bareSpec);
    bareBefore = await fanout.memoryMb();
    const bareClients = await subscribe(bareSpec);
    try {
      await sleep(1000);
      bareConnected = await fanout.memoryMb();
      // One message per payment, at the pace the service's payments went; warmed up as the service was.
      const perPaymentMs = (paymentSeconds * 1000) / payments;
      const publish = async (count: number) => {
        for (let index = 0; index < count; index += 1) {
          const next = performance.now() + perPaymentMs;
          await publisher.publish(channel, JSON.stringify({ sentAt: Date.now(), kind: 'payment_succeeded' }));
          await sleep(Math.max(0, next - performance.now()));
        }
      };
      await warmUpFanOut(bareClients, subscribers, subscriptionWarmupPayments, publish);
      const cpuBefore = fanout.cpuMs();
      await publish(payments);
      bareStats = await collect(bareClients, expected, 60_000);
      bareCpuMs = fanout.cpuMs() - cpuBefore;
    } finally {
      await closeSubscribers(bareClients);
    }
  } finally {
    publisher.disconnect();
    await fanout.stop();
  }
  console.log(
    `  ${bareStats.received}/${expected} delivered; p50 ${bareStats.latencyMs.p50} ms, p99 ${bareStats.latencyMs.p99} ms; RSS +${round(bareConnected.rss - bareBefore.rss, 1)} MB; CPU ${round(bareCpuMs, 0)} ms`,
  );

  const perThousand = (grown: number) => round((grown / subscribers) * 1000, 1);
  const live = (memory: { heapUsed: number; external: number }) => memory.heapUsed + memory.external;
  // CPU time per 1,000 deliveries resists a busy machine better than latency does (the service's also pays for the payments).
  const cpuPer1000Deliveries = (cpuMs: number, received: number) => round((cpuMs / Math.max(1, received)) * 1000, 0);
  const service = {
    cpuMsPer1000Deliveries: cpuPer1000Deliveries(serviceCpuMs, serviceStats.received),
    rssMbPer1000: perThousand(serviceConnected.rss - serviceBefore.rss),
    liveMbPer1000: perThousand(live(serviceConnected) - live(serviceBefore)),
  };
  const bare = {
    cpuMsPer1000Deliveries: cpuPer1000Deliveries(bareCpuMs, bareStats.received),
    rssMbPer1000: perThousand(bareConnected.rss - bareBefore.rss),
    liveMbPer1000: perThousand(live(bareConnected) - live(bareBefore)),
  };
  return {
    subscribers,
    events: payments,
    deliveriesExpected: expected,
    service: {
      deliveriesReceived: serviceStats.received,
      latencyMs: serviceStats.latencyMs,
      memoryMb: { before: serviceBefore, connected: serviceConnected },
      per1000: service,
    },
    bareFanout: {
      deliveriesReceived: bareStats.received,
      latencyMs: bareStats.latencyMs,
      memoryMb: { before: bareBefore, connected: bareConnected },
      per1000: bare,
    },
    ratios: {
      p50ToBare: ratio(serviceStats.latencyMs.p50, bareStats.latencyMs.p50),
      p99ToBare: ratio(serviceStats.latencyMs.p99, bareStats.latencyMs.p99),
      liveMemoryToBare: ratio(service.liveMbPer1000, bare.liveMbPer1000),
      rssToBare: ratio(service.rssMbPer1000, bare.rssMbPer1000),
      cpuToBare: ratio(service.cpuMsPer1000Deliveries, bare.cpuMsPer1000Deliveries),
    },
  };
}
