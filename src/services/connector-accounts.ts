// A merchant's accounts at processors: credentials validated per connector and sealed at rest; the
// eligible account for a payment chosen by the merchant's preference.
import { z } from 'zod';
import type { Connector } from '../connectors/connector.ts';
import { CONNECTORS, isConnectorName, type ConnectorName } from '../connectors/registry.ts';
import { AppError, invalidInput } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Mode } from '../domain/api-keys.ts';
import type { ConnectorAccount } from '../generated/prisma/client.ts';
import type { ServiceContext } from './context.ts';
import type { MerchantPrincipal } from './principal.ts';
import { parseInput } from './validation.ts';

const createInput = z.object({
  connectorName: z.string().refine(isConnectorName, { message: `must be one of: ${Object.keys(CONNECTORS).join(', ')}` }),
  credentials: z.record(z.string(), z.unknown()),
  webhookSecret: z.string().min(16, 'must be at least 16 characters').max(256).nullish(),
  paymentMethods: z.array(z.string()).max(20).nullish(),
  mode: z.enum(['TEST', 'LIVE']).nullish(),
});

export class ConnectorAccountService {
  constructor(private readonly context: ServiceContext) {}

  async create(principal: MerchantPrincipal, rawInput: unknown): Promise<ConnectorAccount> {
    const input = parseInput(createInput, rawInput);
    const name = input.connectorName as ConnectorName;
    const definition = CONNECTORS[name];
    const credentials = definition.credentialsSchema.safeParse(input.credentials);
    if (!credentials.success) {
      const issue = credentials.error.issues[0]!;
      throw invalidInput(['credentials', ...issue.path.map(String)].join('.'), issue.message);
    }
    const mode: Mode = input.mode ?? principal.mode;
    if (mode !== principal.mode) throw new AppError('FORBIDDEN', `A ${principal.mode.toLowerCase()} key creates ${principal.mode.toLowerCase()} connector accounts only.`);
    const paymentMethods = input.paymentMethods ?? [...definition.paymentMethods];
    const unsupported = paymentMethods.find((method) => !definition.paymentMethods.includes(method));
    if (unsupported) throw invalidInput('paymentMethods', `${name} does not support ${unsupported} (supported: ${definition.paymentMethods.join(', ')})`);
    return this.context.db.connectorAccount.create({
      data: {
        id: newId('connectorAccount'),
        merchantId: principal.merchantId,
        connectorName: name,
        mode,
        credentialsEncrypted: this.context.secretBox.seal(JSON.stringify(credentials.data)),
        webhookSecretEncrypted: input.webhookSecret ? this.context.secretBox.seal(input.webhookSecret) : null,
        paymentMethods,
      },
    });
  }

  async list(principal: MerchantPrincipal): Promise<ConnectorAccount[]> {
    return this.context.db.connectorAccount.findMany({
      where: { merchantId: principal.merchantId, mode: principal.mode },
      orderBy: { createdAt: 'asc' },
    });
  }

  /** The first enabled account of the merchant and mode that accepts `paymentMethod`, in the preferred connector order. */
  async eligible(merchantId: string, mode: Mode, paymentMethod: string, preference: readonly string[]): Promise<ConnectorAccount | null> {
    const accounts = await this.context.db.connectorAccount.findMany({
      where: { merchantId, mode, disabled: false, paymentMethods: { has: paymentMethod } },
      orderBy: { createdAt: 'asc' },
    });
    const rank = (account: ConnectorAccount) => {
      const index = preference.indexOf(account.connectorName);
      return index === -1 ? preference.length : index;
    };
    return accounts.sort((a, b) => rank(a) - rank(b))[0] ?? null;
  }

  /** A client for one account, with its credentials decrypted (they never leave this process). */
  connectorFor(account: Pick<ConnectorAccount, 'connectorName' | 'credentialsEncrypted'>): Connector {
    if (!isConnectorName(account.connectorName)) throw new Error(`unknown connector ${account.connectorName}`);
    const definition = CONNECTORS[account.connectorName];
    const credentials = definition.credentialsSchema.parse(JSON.parse(this.context.secretBox.open(account.credentialsEncrypted)));
    const { config } = this.context;
    return definition.create(credentials, { sandboxUrl: config.SANDBOX_URL, timeoutMs: config.CONNECTOR_TIMEOUT_MS });
  }
}
