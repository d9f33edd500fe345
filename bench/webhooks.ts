// Webhook delivery throughput against the machine's own ceiling: the rate at which BullMQ alone runs no-op
// jobs (the queue's cost, with the same Redis and concurrency) beside the rate of real deliveries (claim in
// PostgreSQL, sign, POST to a local 2xx receiver over keep-alive, record the attempt, mark delivered).
// Run with `npm run bench`; results go to bench/results/webhooks.json and are printed.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Queue, Worker } from 'bullmq';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.ts';
import { createScratchDatabase } from '../src/db/scratch-database.ts';
import { createLogger } from '../src/logger.ts';
import { createServiceContext } from '../src/service-context.ts';
import { ensureDemoMerchant } from '../src/services/demo-merchant.ts';
import { EventOutbox } from '../src/services/events/event-outbox.ts';
import { startWorker } from '../src/worker/worker.ts';
import { WebhookQueue } from '../src/worker/webhook-queue.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '10,50').split(',').map(Number);
const logger = createLogger('silent');

async function receiver() {
  let received = 0;
  const server = createServer((request, reply) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      reply.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, received: () => received, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** BullMQ's own ceiling: `count` no-op jobs through one worker at `concurrency`. */
async function rawBullmqRate(config: Config, count: number, concurrency: number): Promise<number> {
  const connection = { url: config.REDIS_URL };
  const name = `bench-noop-${randomBytes(3).toString('hex')}`;
  const queue = new Queue(name, { connection, prefix: config.REDIS_PREFIX });
  await queue.addBulk(Array.from({ length: count }, (_, index) => ({ name: 'noop', data: { index }, opts: { jobId: `noop-${index}`, removeOnComplete: true } })));
  let done = 0;
  const started = performance.now();
  const finished = new Promise<void>((resolve) => {
    const worker = new Worker(name, async () => undefined, { connection: { ...connection, maxRetriesPerRequest: null }, prefix: config.REDIS_PREFIX, concurrency });
    worker.on('completed', () => {
      done += 1;
      if (done === count) void worker.close().then(resolve);
    });
  });
  await finished;
  const seconds = (performance.now() - started) / 1000;
  await queue.obliterate({ force: true });
  await queue.close();
  return count / seconds;
}

/** Real deliveries: `count` committed events, enqueued, then one worker process's webhook worker drains them. */
async function deliveryRate(config: Config, count: number) {
  const context = createServiceContext(config, logger);
  const target = await receiver();
  const demo = await ensureDemoMerchant(context);
  await context.db.businessProfile.update({ where: { id: demo.profileId }, data: { testWebhookUrl: target.url, testWebhookDisabledAt: null } });
  const queue = new WebhookQueue(config, logger);
  const outbox = new EventOutbox(context, queue, { paymentChanged: () => undefined, eventCreated: () => undefined });
  const object = { payment_id: 'pay_bench', status: 'succeeded', amount: 1000, currency: 'USD', metadata: { note: 'x'.repeat(600) } };
  const ids: string[] = [];
  for (let start = 0; start < count; start += 200) {
    const batch = await context.db.$transaction(async (tx) => {
      const recorded = [];
      for (let index = start; index < Math.min(start + 200, count); index += 1) {
        const objectId = `pay_bench${randomBytes(8).toString('hex')}`;
        recorded.push(await outbox.record(tx, { merchantId: demo.merchantId, profileId: demo.profileId, mode: 'TEST', eventType: 'payment_succeeded', objectId, objectVersion: 1, object, isTest: false }));
      }
      return recorded;
    });
    for (const event of batch) ids.push(event.id);
  }
  await Promise.all(ids.map((id) => queue.enqueue(id)));
  const memoryBefore = process.memoryUsage().rss;
  const started = performance.now();
  const worker = await startWorker(config, logger);
  const sql = new pg.Client({ connectionString: config.DATABASE_URL });
  await sql.connect();
  for (;;) {
    const { rows } = await sql.query<{ left: number }>(`SELECT count(*)::int AS left FROM events WHERE delivery_status = 'PENDING'`);
    if (rows[0]!.left === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  const rssGrowthMb = (process.memoryUsage().rss - memoryBefore) / 1024 / 1024;
  const { rows } = await sql.query<{ delivered: number }>(`SELECT count(*)::int AS delivered FROM events WHERE delivery_status = 'DELIVERED'`);
  await sql.query('DELETE FROM webhook_delivery_attempts');
  await sql.query('DELETE FROM events');
  await sql.end();
  await worker.close();
  await queue.close();
  await context.db.$disconnect();
  await target.close();
  return { perSecond: count / seconds, delivered: rows[0]!.delivered, received: target.received(), rssGrowthMb };
}

async function main() {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const database = await createScratchDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', `payments_bench_${runId}`);
  const results = [];
  try {
    for (const concurrency of CONCURRENCIES) {
      const config = loadConfig({
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        REDIS_PREFIX: `bench_${runId}`,
        WORKER_CONCURRENCY: String(concurrency),
        DATABASE_POOL_SIZE: String(Math.min(concurrency + 5, 60)),
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RECONCILE_INTERVAL_MS: '3600000',
      });
      const raw = await rawBullmqRate(config, EVENTS * 2, concurrency);
      const delivery = await deliveryRate(config, EVENTS);
      if (delivery.delivered !== EVENTS || delivery.received !== EVENTS) throw new Error(`expected ${EVENTS} deliveries, got ${delivery.delivered} delivered and ${delivery.received} received`);
      results.push({
        concurrency,
        events: EVENTS,
        rawBullmqJobsPerSecond: Math.round(raw),
        webhookDeliveriesPerSecond: Math.round(delivery.perSecond),
        ratio: Number((delivery.perSecond / raw).toFixed(3)),
        rssGrowthMb: Number(delivery.rssGrowthMb.toFixed(1)),
      });
      console.log(results.at(-1));
    }
  } finally {
    await database.drop();
  }
  const report = { benchmark: 'webhook delivery', date: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, results };
  await mkdir(new URL('results/', import.meta.url), { recursive: true });
  await writeFile(new URL('results/webhooks.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
}

await main();
