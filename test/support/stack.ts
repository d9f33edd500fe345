// The API and the sandbox processor, each on its own port, talking over real HTTP.
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { startSandbox } from '../../src/sandbox/server.ts';
import { CreateConnectorAccountDocument } from '../gql/graphql.ts';
import { createMerchant, startTestApi, type TestApi } from './api.ts';
import { dataOf } from './graphql-client.ts';

export interface Stack {
  api: TestApi;
  sandboxUrl: string;
  close: () => Promise<void>;
}

export async function startStack(options: { sandboxLatencyMs?: number; env?: Record<string, string> } = {}): Promise<Stack> {
  const sandbox = await startSandbox({ port: 0, latencyMs: options.sandboxLatencyMs ?? 0 });
  const api = await startTestApi({ SANDBOX_URL: sandbox.url, ...options.env });
  return {
    api,
    sandboxUrl: sandbox.url,
    close: async () => {
      await api.close();
      await sandbox.close();
    },
  };
}

/** A merchant with one sandbox connector account (its own sandbox key). */
export async function merchantWithSandbox(stack: Stack) {
  const merchant = await createMerchant(stack.api);
  const sandboxKey = `sk_sandbox_${randomBytes(12).toString('hex')}`;
  const account = dataOf(
    await merchant.secret(CreateConnectorAccountDocument, { input: { connectorName: 'sandbox', credentials: { apiKey: sandboxKey } } }),
  ).createConnectorAccount;
  /** Reads the sandbox's own view of a payment, as the merchant's processor account sees it. */
  const sandboxPayment = async (path: string) => {
    const response = await fetch(`${stack.sandboxUrl}/v1/payments${path}`, { headers: { authorization: `Bearer ${sandboxKey}` } });
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
