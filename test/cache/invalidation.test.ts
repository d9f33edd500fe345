// The read cache across API processes (docs/architecture.md, "Read cache"): a key revoked, a profile setting
// changed, a connector account disabled or a routing algorithm set through one process takes effect in another
// that had them cached; a row changed in the database alone stays cached until an invalidation is published
// (docs/operations.md); and a process whose subscription connection dropped reads the database, so a key revoked
// meanwhile is refused there too.
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CreateApiKeyDocument,
  CreatePaymentDocument,
  MerchantDocument,
  ProfileRoutingDocument,
  RevokeApiKeyDocument,
  SetRoutingAlgorithmDocument,
  UpdateBusinessProfileDocument,
  UpdateConnectorAccountDocument,
} from '../gql/graphql.ts';
import type { ApiClient } from '../support/api.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startProcessStack, type ProcessStack } from '../support/process-stack.ts';
import { startApiProcess, type ApiProcess } from '../support/processes.ts';
import { merchantWithSandbox } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { card } from '../support/webhooks.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
let stack: ProcessStack;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
/** An API process whose Redis connections all go through `proxy`. */
let proxied: ApiProcess;
let sql: pg.Client;
let redis: Redis;

beforeAll(async () => {
  proxy = await tcpProxy(Number(new URL(REDIS_URL).port));
  stack = await startProcessStack({ apis: 2 });
  proxied = await startApiProcess({ ...stack.env, REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
  sql = new pg.Client({ connectionString: stack.databaseUrl });
  await sql.connect();
  redis = new Redis(REDIS_URL);
}, 180_000);
afterAll(async () => {
  redis?.disconnect();
  await sql?.end();
  await proxied?.process.stop(10_000);
  await stack?.close();
  await proxy?.close();
}, 60_000);

const eventually = { timeout: 20_000, interval: 50 };

/** A sample of the process's /metrics. */
async function metric(api: ApiClient, name: string): Promise<number> {
  const text = await (await fetch(`${api.url}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/** Runs `request` on `api` until it is answered from the cache (so the test's later reads there would be too). */
async function cachedOn<T>(api: ApiClient, request: () => Promise<T>): Promise<T> {
  await vi.waitFor(async () => expect(await metric(api, 'read_cache_serving')).toBe(1), eventually);
  await request();
  const hits = await metric(api, 'read_cache_reads_total{outcome="hit"}');
  const answer = await request();
  expect(await metric(api, 'read_cache_reads_total{outcome="hit"}')).toBeGreaterThan(hits);
  return answer;
}

async function newKey(merchant: Awaited<ReturnType<typeof createMerchant>>) {
  return dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'cached', type: 'SECRET' } })).createApiKey;
}

const refused = async (api: ApiClient, key: string) => errorOf(await api.as(key)(MerchantDocument), 'UNAUTHENTICATED');

describe('read cache invalidation across API processes', { timeout: 90_000 }, () => {
  it('a key revoked through one process is refused by another that had it cached', async () => {
    const [one, other] = stack.apis as [ApiProcess, ApiProcess];
    const merchant = await createMerchant(one);
    const { key, apiKey } = await newKey(merchant);
    await cachedOn(other, async () => dataOf(await other.as(key)(MerchantDocument)));
    dataOf(await merchant.secret(RevokeApiKeyDocument, { input: { keyId: apiKey.id } }));
    await vi.waitFor(() => refused(other, key), eventually);
  });

  it('a profile setting changed through one process is used by another that had the profile cached', async () => {
    const [one, other] = stack.apis as [ApiProcess, ApiProcess];
    const merchant = await createMerchant(one);
    const create = async () => dataOf(await other.as(merchant.secretKey)(CreatePaymentDocument, { input: { amount: 1000, currency: 'EUR' } })).createPayment;
    const lifetime = (payment: { expiresAt: string | null | undefined }) => new Date(payment.expiresAt!).getTime() - Date.now();
    expect(lifetime(await cachedOn(other, create))).toBeLessThan(3000 * 1000);
    dataOf(await merchant.secret(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, sessionExpirySeconds: 7200 } }));
    await vi.waitFor(async () => expect(lifetime(await create())).toBeGreaterThan(3000 * 1000), eventually);
  });

  it('a connector account disabled through one process is no longer routed to by another that had it cached', async () => {
    const [one, other] = stack.apis as [ApiProcess, ApiProcess];
    const shop = await merchantWithSandbox({ api: one, sandboxUrl: stack.sandboxUrl });
    const pay = async () =>
      other.as(shop.secretKey)(CreatePaymentDocument, { input: { amount: 1000, currency: 'EUR', confirm: true, paymentMethodData: card() } });
    expect(dataOf(await cachedOn(other, pay)).createPayment.status).toBe('SUCCEEDED');
    dataOf(await shop.secret(UpdateConnectorAccountDocument, { input: { id: shop.connectorAccountId, disabled: true } }));
    await vi.waitFor(async () => expect(errorOf(await pay(), 'INVALID_INPUT').message).toContain('no connector account'), eventually);
  });

  it('a routing algorithm set through one process is used by another that had the profile’s (absent) one cached', async () => {
    const [one, other] = stack.apis as [ApiProcess, ApiProcess];
    const shop = await merchantWithSandbox({ api: one, sandboxUrl: stack.sandboxUrl });
    const active = async () => dataOf(await other.as(shop.secretKey)(ProfileRoutingDocument)).businessProfiles[0]!.routingAlgorithm;
    expect(await cachedOn(other, active)).toBeNull();
    dataOf(await shop.secret(SetRoutingAlgorithmDocument, { input: { profileId: shop.profileId, algorithm: { priority: [shop.connectorAccountId] } } }));
    await vi.waitFor(async () => expect((await active())?.type).toBe('PRIORITY'), eventually);
  });

  it('a key revoked in the database alone stays cached until an invalidation is published on Redis', async () => {
    const [one, other] = stack.apis as [ApiProcess, ApiProcess];
    const merchant = await createMerchant(one);
    const { key, apiKey } = await newKey(merchant);
    await cachedOn(other, async () => dataOf(await other.as(key)(MerchantDocument)));
    await sql.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [apiKey.id]);
    dataOf(await other.as(key)(MerchantDocument));
    // What docs/operations.md tells an operator to do after such a write.
    await redis.publish(`${stack.env.REDIS_PREFIX}:cache:invalidate`, JSON.stringify([`apiKey:${apiKey.id}`]));
    await vi.waitFor(() => refused(other, key), eventually);
  });

  it('a process that lost its subscription connection reads the database: a key revoked meanwhile is refused', async () => {
    const merchant = await createMerchant(stack.api);
    const { key, apiKey } = await newKey(merchant);
    await cachedOn(proxied, async () => dataOf(await proxied.as(key)(MerchantDocument)));
    proxy.refuse(true);
    proxy.cut();
    dataOf(await merchant.secret(RevokeApiKeyDocument, { input: { keyId: apiKey.id } }));
    await vi.waitFor(() => refused(proxied, key), eventually);
    proxy.refuse(false);
  });
});
