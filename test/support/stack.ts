// The API and the sandbox processor, each on its own port, talking over real HTTP, and the payment sync worker.
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { startSandbox } from '../../sandbox/src/server.ts';
import { CreateConnectorAccountDocument, type CreateConnectorAccountInput } from '../gql/graphql.ts';
import { createMerchant, startTestApi, type ApiClient, type TestApi } from './api.ts';
import { dataOf } from './graphql-client.ts';
import { startTestWorker } from './worker.ts';
import type { Logger } from '../../src/platform/logger.ts';

/** What the merchant helpers need of a stack: an API to call and the sandbox its connector accounts are at. */
export interface StackLike {
  api: ApiClient;
  sandboxUrl: string;
}

export interface Stack extends StackLike {
  api: TestApi;
  /** The settings the API (and the worker) run with, to start more processes of the same stack. */
  env: Record<string, string>;
  /** The worker's GET /metrics (null without a worker). */
  workerMetricsUrl: string | null;
  close: () => Promise<void>;
}

export interface StackOptions {
  sandboxLatencyMs?: number;
  /** How long the sandbox's bank debits stay processing (3 s by default). */
  sandboxBankDebitSettleMs?: number;
  /** How long the sandbox's pending refunds wait before they settle (3 s by default). */
  sandboxRefundSettleMs?: number;
  /** How long after its payment succeeded the sandbox's dispute test card is disputed (3 s by default). */
  sandboxDisputeOpenMs?: number;
  /** How long each step of the sandbox's payouts takes (3 s by default). */
  sandboxPayoutSettleMs?: number;
  /** Settings of the API and the worker. */
  env?: Record<string, string>;
  /** Settings of the worker only, over `env` (a worker more patient with the processor than the API). */
  workerEnv?: Record<string, string>;
  /** false: no worker (the test starts its own, when and how it wants). */
  worker?: boolean;
  /** Where the API and the worker log (a test capturing their lines); LOG_LEVEL's by default. */
  logger?: Logger;
  /** The API's routing and balance clock (milliseconds): a test moves it to cross a circuit's cool-down, or a settlement date, without waiting. */
  clock?: () => number;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const sandbox = await startSandbox({
    port: 0,
    latencyMs: options.sandboxLatencyMs ?? 0,
    bankDebitSettleMs: options.sandboxBankDebitSettleMs,
    refundSettleMs: options.sandboxRefundSettleMs,
    disputeOpenMs: options.sandboxDisputeOpenMs,
    payoutSettleMs: options.sandboxPayoutSettleMs,
  });
  // A Redis prefix of its own: the stack's worker syncs through its own sandbox, so it must see only the
  // payments of this stack, not those of another test's stack running meanwhile.
  const env = { SANDBOX_URL: sandbox.url, REDIS_PREFIX: `${inject('redisPrefix')}_${randomBytes(3).toString('hex')}`, ...options.env };
  const api = await startTestApi(env, { clock: options.clock, logger: options.logger });
  const worker = options.worker === false ? null : await startTestWorker({ ...env, ...options.workerEnv }, options.logger);
  return {
    api,
    workerMetricsUrl: worker?.metricsUrl ?? null,
    sandboxUrl: sandbox.url,
    env,
    close: async () => {
      await worker?.close();
      await api.close();
      await sandbox.close();
    },
  };
}

type ConnectorName = 'sandbox' | 'fauxpay';

/** Where each of the sandbox's processors is served, under the sandbox's URL. */
const PROCESSOR_PATHS: Record<ConnectorName, string> = { sandbox: '', fauxpay: '/fauxpay' };

/** Account settings beyond the connector and its key (what createConnectorAccount accepts). */
type AccountSettings = Omit<CreateConnectorAccountInput, 'connectorName' | 'credentials'>;

/** Adds an account at one of the sandbox's processors (with its own new key) to `merchant`; returns the key. */
export async function addConnectorAccount(stack: StackLike, merchant: Pick<Merchant, 'secret'>, connectorName: ConnectorName, settings: AccountSettings = {}) {
  const key = `sk_${connectorName}_${randomBytes(12).toString('hex')}`;
  const account = dataOf(
    await merchant.secret(CreateConnectorAccountDocument, { input: { connectorName, credentials: { apiKey: key }, ...settings } }),
  ).createConnectorAccount;
  return { key, account, url: `${stack.sandboxUrl}${PROCESSOR_PATHS[connectorName]}` };
}

type Merchant = Awaited<ReturnType<typeof createMerchant>>;

/** A merchant with one account at a sandbox processor (sandbox by default), its key and a reader of its payments there. */
export async function merchantWithSandbox(stack: StackLike, connectorName: ConnectorName = 'sandbox', settings: AccountSettings = {}) {
  const merchant = await createMerchant(stack.api);
  const { key: sandboxKey, account, url } = await addConnectorAccount(stack, merchant, connectorName, settings);
  /** Reads the processor's own view of a payment, as the merchant's processor account sees it. */
  const sandboxPayment = async (path: string) => {
    const response = await fetch(`${url}/v1/payments${path}`, { headers: { authorization: `Bearer ${sandboxKey}` } });
    return { status: response.status, body: (await response.json()) as { id: string; status: string; amount_captured: number; reference: string | null } };
  };
  return { ...merchant, sandboxKey, connectorAccountId: account.id, sandboxPayment };
}

/** A port nothing listens on (taken from the OS, then released): a processor that refuses connections. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
