// Subscription fan-out: 1,000 graphql-ws subscribers of one profile's paymentEvents on one API process,
// while card payments run through the sandbox processor. Reports the latency from an event's commit (its
// createdAt, written in the committing transaction) to each subscriber's receipt (p50, p99, max), and the
// process's memory with the subscribers connected. The clients run in this process too (2 cores shared),
// so the figures are an upper bound. Results go to bench/results/subscriptions.json.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startApi } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createScratchDatabase } from '../src/db/scratch-database.ts';
import { createLogger } from '../src/logger.ts';
import { startSandbox } from '../src/sandbox/server.ts';
import { ensureDemoMerchant } from '../src/services/demo-merchant.ts';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 20);
const logger = createLogger('silent');

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function graphql(url: string, key: string, query: string, variables: Record<string, unknown>) {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': key }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: Record<string, Record<string, string>>; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

async function main() {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const database = await createScratchDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', `payments_bench_${runId}`);
  const sandbox = await startSandbox({ port: 0, latencyMs: 0 });
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    REDIS_PREFIX: `bench_${runId}`,
    PORT: '0',
    HOST: '127.0.0.1',
    SANDBOX_URL: sandbox.url,
    SUBSCRIPTIONS_PER_KEY: String(SUBSCRIBERS + 10),
  });
  const api = await startApi(config, logger);
  const clients: Client[] = [];
  try {
    const demo = await ensureDemoMerchant(api.context);
    const latencies: number[] = [];
    let received = 0;
    const query = `subscription($profileId: String!) { paymentEvents(profileId: $profileId) { id eventType createdAt } }`;
    const memoryBefore = process.memoryUsage();
    await Promise.all(
      Array.from({ length: SUBSCRIBERS }, async () => {
        const client = createClient({ url: `${api.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { 'api-key': demo.secretKey }, retryAttempts: 0 });
        clients.push(client);
        await new Promise<void>((resolve, reject) => {
          client.on('connected', () => resolve());
          client.subscribe<{ paymentEvents: { createdAt: string } }>(
            { query, variables: { profileId: demo.profileId } },
            {
              next: (result) => {
                received += 1;
                latencies.push(Date.now() - Date.parse(result.data!.paymentEvents.createdAt));
              },
              error: reject,
              complete: () => undefined,
            },
          );
        });
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 500)); // every subscription reaches Redis
    global.gc?.();
    const memoryConnected = process.memoryUsage();
    const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };
    for (let index = 0; index < PAYMENTS; index += 1) {
      const created = await graphql(api.url, demo.secretKey, 'mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id clientSecret } }', { input: { amount: 1000, currency: 'USD' } });
      await graphql(api.url, demo.publishableKey, 'mutation($input: ConfirmPaymentInput!) { confirmPayment(input: $input) { status } }', {
        input: { clientSecret: created.createPayment!.clientSecret, paymentMethodData: card },
      });
    }
    const expected = PAYMENTS * 2 * SUBSCRIBERS;
    const deadline = Date.now() + 60_000;
    while (received < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    latencies.sort((a, b) => a - b);
    const result = {
      subscribers: SUBSCRIBERS,
      events: PAYMENTS * 2,
      deliveriesExpected: expected,
      deliveriesReceived: received,
      latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? null },
      rssMb: { before: Math.round(memoryBefore.rss / 2 ** 20), connected: Math.round(memoryConnected.rss / 2 ** 20) },
      heapUsedMb: { before: Math.round(memoryBefore.heapUsed / 2 ** 20), connected: Math.round(memoryConnected.heapUsed / 2 ** 20) },
    };
    console.log(result);
    const report = { benchmark: 'subscription fan-out (paymentEvents over graphql-ws)', date: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, result };
    await mkdir(new URL('results/', import.meta.url), { recursive: true });
    await writeFile(new URL('results/subscriptions.json', import.meta.url), `${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await Promise.all(clients.map((client) => client.dispose()));
    await api.close();
    await sandbox.close();
    await database.drop();
  }
}

await main();
