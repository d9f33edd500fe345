// The connectors this service can route to: how to validate an account's credentials, what it accepts,
// and how to build a client for one account.
import type { z } from 'zod';
import type { Connector } from './connector.ts';
import { SandboxConnector, sandboxCredentialsSchema } from './sandbox.ts';

export interface ConnectorSettings {
  sandboxUrl: string;
  timeoutMs: number;
}

interface ConnectorDefinition<Credentials> {
  credentialsSchema: z.ZodType<Credentials>;
  paymentMethods: readonly string[];
  create(credentials: Credentials, settings: ConnectorSettings): Connector;
}

const define = <Credentials>(definition: ConnectorDefinition<Credentials>) => definition;

export const CONNECTORS = {
  sandbox: define({
    credentialsSchema: sandboxCredentialsSchema,
    paymentMethods: ['card'],
    create: (credentials, settings) => new SandboxConnector(credentials, { baseUrl: settings.sandboxUrl, timeoutMs: settings.timeoutMs }),
  }),
} as const;

export type ConnectorName = keyof typeof CONNECTORS;

export function isConnectorName(name: string): name is ConnectorName {
  return Object.hasOwn(CONNECTORS, name);
}
