// Starts the real API (HTTP server on a free port) against this run's database.
import pg from 'pg';
import { inject } from 'vitest';
import { startApi, type ApiApp, type ApiOptions } from '../../src/main/api-app.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger, type Logger } from '../../src/platform/logger.ts';
import { CreateMerchantAccountDocument } from '../gql/graphql.ts';
import { dataOf, graphqlClient, type Execute } from './graphql-client.ts';

export const TEST_ADMIN_KEY = 'admin_test_key_0123456789abcdef';

const UNREACHED_RATE_LIMITS = {
  RATE_LIMIT_FAILED_AUTH_PER_IP: '1000000/60',
  RATE_LIMIT_LINK_USES_PER_IP: '1000000/60',
  RATE_LIMIT_LINK_USES_PER_LINK: '1000000/60',
  RATE_LIMIT_CONFIRMS_PER_CLIENT_SECRET: '1000000/60',
  RATE_LIMIT_DECLINES_PER_LINK: '1000000/60',
  RATE_LIMIT_LOGINS_PER_IP: '1000000/60',
  RATE_LIMIT_LOGINS_PER_EMAIL: '1000000/60',
  SUBSCRIPTIONS_PER_CLIENT_SECRET: '1000',
  SUBSCRIPTIONS_PER_CLIENT_IP: '10000',
};

export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: inject('databaseUrl'),
    REDIS_PREFIX: inject('redisPrefix'),
    ENCRYPTION_KEY: inject('encryptionKey'),
    HOST: '127.0.0.1',
    PORT: '0',
    SANDBOX_PORT: '0',
    WORKER_METRICS_PORT: '0',
    ADMIN_API_KEY: TEST_ADMIN_KEY,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The payment sync schedule in milliseconds instead of minutes (15 ms, 30 ms, … 35 s in all).
    PAYMENT_SYNC_DELAY_SCALE: '0.001',
    // Test-mode webhooks reach receivers on this machine; the seed's 1441-minute schedule runs in 8.6 s.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAY_SCALE: '0.0001',
    WEBHOOK_RECONCILE_INTERVAL_MS: '500',
    // No sweeps unless a test asks for them, on a database of its own (test/support/database.ts): a sweep acts on
    // every row of its database, and each stack's worker charges through its own sandbox, which would know neither
    // the card nor the mandate of another test's due subscription.
    PAYMENT_EXPIRY_SWEEP_MS: '0',
    SUBSCRIPTION_SWEEP_MS: '0',
    // A busy 2-CPU machine can keep every pooled connection busy past Prisma's 2 s (P2028, a flaky beforeAll
    // creating merchants): tests wait for a connection as long as a test may take, and fail on assertions instead.
    DATABASE_TRANSACTION_MAX_WAIT_MS: '20000',
    // bcrypt's cheapest cost: dashboard sign-ins in tests take milliseconds, not a quarter second.
    DASHBOARD_BCRYPT_COST: '4',
    SUBSCRIPTION_KEY_RECHECK_MS: '200',
    // Limits no test reaches by accident: the suite sends many requests from one address, and some send
    // wrong keys on purpose. The rate-limit tests set low ones (test/api/rate-limits.test.ts).
    ...UNREACHED_RATE_LIMITS,
    ...overrides,
  };
}

/** GraphQL clients of an API at `url`, in this process or another. */
export interface ApiClient {
  url: string;
  /** A client with `key` (or no key). */
  as: (key?: string) => Execute;
  admin: Execute;
}

export const apiClient = (url: string): ApiClient => ({ url, as: (key) => graphqlClient(url, key), admin: graphqlClient(url, TEST_ADMIN_KEY) });

export interface TestApi extends ApiApp, ApiClient {}

/** `logger`: where the API logs (a test capturing its lines); LOG_LEVEL's by default. */
export async function startTestApi(overrides: Record<string, string> = {}, options: ApiOptions & { logger?: Logger } = {}): Promise<TestApi> {
  const config = loadConfig(testEnv(overrides));
  const api = await startApi(config, options.logger ?? createLogger(config.LOG_LEVEL), options);
  return { ...api, ...apiClient(api.url) };
}

export interface TestApiWithDatabase extends TestApi {
  /** A client of the run's database, for tests that look at the rows themselves. */
  sql: pg.Client;
}

/** startTestApi with a database client; close() ends both. */
export async function startTestApiWithDatabase(overrides: Record<string, string> = {}): Promise<TestApiWithDatabase> {
  const api = await startTestApi(overrides);
  const sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
  const close = async () => {
    await sql.end();
    await api.close();
  };
  return { ...api, sql, close };
}

let merchantCounter = 0;

/** A new merchant through the public API, as an operator would create it. */
export async function createMerchant(api: ApiClient, name = `Merchant ${++merchantCounter}`) {
  const { createMerchantAccount } = dataOf(await api.admin(CreateMerchantAccountDocument, { input: { name } }));
  return {
    merchantId: createMerchantAccount.merchant.id,
    profileId: createMerchantAccount.businessProfile.id,
    secretKey: createMerchantAccount.secretKey,
    publishableKey: createMerchantAccount.publishableKey,
    paymentResponseHashKey: createMerchantAccount.paymentResponseHashKey,
    secret: api.as(createMerchantAccount.secretKey),
    publishable: api.as(createMerchantAccount.publishableKey),
  };
}
