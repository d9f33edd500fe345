// A merchant's accounts at processors: credentials validated per connector and sealed at rest; the
// eligible account for a payment chosen by the merchant's preference.
import { instrumentConnector } from './instrumented.ts';
import type { Connector } from './port.ts';
import { CONNECTORS, isConnectorName, type ConnectorDefinition, type ConnectorName } from './registry.ts';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { type PaymentMethodType } from '../payments/methods.ts';
import type { ConnectorAccount, Prisma } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { MerchantPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createConnectorAccountInput, updateConnectorAccountInput } from './inputs.ts';

/** What a payment needs of a connector account to be routed there. */
export interface RoutingRequest {
  merchantId: string;
  mode: Mode;
  paymentMethodType: PaymentMethodType;
  currency: string;
  country: string | null;
  /** The payment's own connector order (names), tried first. */
  paymentConnectors: readonly string[];
  /** The profile's connector order (names), tried next; other eligible accounts follow, oldest first. */
  profileRouting: readonly string[];
}

/** The read cache's tag of a merchant's connector accounts: invalidated whenever one of them changes. */
export const connectorAccountsTag = (merchantId: string) => `connectorAccounts:${merchantId}`;

export class ConnectorAccountService {
  /**
   * The connector built for each account row, kept as long as the row is: the read cache's rows (routable) are
   * shared by every payment routed to them until a change of the merchant's accounts replaces them, so those
   * payments decrypt and validate the credentials, and build the client, once rather than each.
   */
  readonly #connectors = new WeakMap<object, Connector>();

  constructor(private readonly context: ServiceContext) {}

  async create(principal: MerchantPrincipal, rawInput: unknown): Promise<ConnectorAccount> {
    const input = parseInput(createConnectorAccountInput, rawInput);
    const name = input.connectorName as ConnectorName;
    const definition: ConnectorDefinition = CONNECTORS[name];
    const credentials = definition.credentialsSchema.safeParse(input.credentials);
    if (!credentials.success) {
      const issue = credentials.error.issues[0]!;
      throw invalidInput(['credentials', ...issue.path.map(String)].join('.'), issue.message);
    }
    const mode: Mode = input.mode ?? principal.mode;
    if (mode !== principal.mode)
      throw new AppError('FORBIDDEN', `A ${principal.mode.toLowerCase()} key creates ${principal.mode.toLowerCase()} connector accounts only.`);
    const keyMode = (definition as ConnectorDefinition<unknown>).modeOf?.(credentials.data);
    if (keyMode !== undefined && keyMode !== mode)
      throw invalidInput('credentials.apiKey', `is a ${keyMode.toLowerCase()} key; a ${mode.toLowerCase()} connector account takes ${mode.toLowerCase()} keys`);
    const missing = (definition as ConnectorDefinition<unknown>).missingIn?.(credentials.data, mode);
    if (missing) throw invalidInput(`credentials.${missing.field}`, missing.message);
    const paymentMethods = (input.paymentMethods ?? [...definition.paymentMethods]) as PaymentMethodType[];
    const unsupported = paymentMethods.find((method) => !(definition.paymentMethods as readonly PaymentMethodType[]).includes(method));
    if (unsupported) throw invalidInput('paymentMethods', `${name} does not support ${unsupported} (supported: ${definition.paymentMethods.join(', ')})`);
    const account = await this.context.db.connectorAccount.create({
      data: {
        id: newId('connectorAccount'),
        merchantId: principal.merchantId,
        connectorName: name,
        mode,
        credentialsEncrypted: this.context.secretBox.seal(JSON.stringify(credentials.data)),
        webhookSecretEncrypted: input.webhookSecret ? this.context.secretBox.seal(input.webhookSecret) : null,
        paymentMethods,
        currencies: input.currencies ?? [],
        countries: input.countries ?? [],
      },
    });
    await this.context.cache.invalidate([connectorAccountsTag(account.merchantId)]);
    return account;
  }

  /**
   * Disables an account (payments and payouts are no longer routed to it: eligible and payoutCandidates skip it)
   * or enables it again. The merchant's own accounts of the key's mode only; payments already on it carry on.
   */
  async update(principal: MerchantPrincipal, rawInput: unknown): Promise<ConnectorAccount> {
    const input = parseInput(updateConnectorAccountInput, rawInput);
    const updated = await this.context.db.connectorAccount.updateManyAndReturn({
      where: { id: input.id, merchantId: principal.merchantId, mode: principal.mode },
      data: { disabled: input.disabled },
    });
    if (updated.length === 0) throw notFound('connector account', input.id);
    await this.context.cache.invalidate([connectorAccountsTag(principal.merchantId)]);
    return updated[0]!;
  }

  async list(principal: MerchantPrincipal): Promise<ConnectorAccount[]> {
    return this.context.db.connectorAccount.findMany({
      where: { merchantId: principal.merchantId, mode: principal.mode },
      orderBy: { createdAt: 'asc' },
    });
  }

  /**
   * The accounts a payment may be routed to, in the order to try them: enabled, of the mode, the merchant's
   * own then (a connected merchant's) its platform's (docs/platforms.md), accepting the method, the currency
   * and the customer's country; within each merchant's, ordered by the payment's connector list, then the
   * profile's, then age. A payment that names connectors is routed to those only.
   */
  async eligible(request: RoutingRequest): Promise<ConnectorAccount[]> {
    const accounts = await this.routable(request.merchantId, request.mode);
    const accepted = accounts.filter(
      (account) =>
        !account.disabled &&
        account.paymentMethods.includes(request.paymentMethodType) &&
        (account.currencies.length === 0 || account.currencies.includes(request.currency)) &&
        (account.countries.length === 0 || (request.country !== null && account.countries.includes(request.country))) &&
        (request.paymentConnectors.length === 0 || request.paymentConnectors.includes(account.connectorName)),
    );
    const rank = (account: ConnectorAccount) => {
      const own = request.paymentConnectors.indexOf(account.connectorName);
      if (own !== -1) return own;
      const profile = request.profileRouting.indexOf(account.connectorName);
      return profile === -1 ? Number.MAX_SAFE_INTEGER : request.paymentConnectors.length + profile;
    };
    const ownerRank = (account: ConnectorAccount) => (account.merchantId === request.merchantId ? 0 : 1);
    // Array.prototype.sort is stable: accounts of equal rank keep their age order.
    return accepted.sort((a, b) => ownerRank(a) - ownerRank(b) || rank(a) - rank(b));
  }

  /**
   * The enabled accounts of `mode` a payout of the merchant may be sent through: its own, oldest first, then (for a
   * connected merchant) its platform's, as for payments (routableBy).
   */
  async payoutCandidates(merchantId: string, mode: Mode): Promise<ConnectorAccount[]> {
    const accounts = (await this.routable(merchantId, mode)).filter((account) => !account.disabled);
    return accounts.sort((a, b) => Number(a.merchantId !== merchantId) - Number(b.merchantId !== merchantId));
  }

  /**
   * Every account of `mode` the merchant's payments and payouts may go to (routableBy), disabled ones included,
   * oldest first, from the read cache (docs/architecture.md, "Read cache"): never mutate them. Invalidated by a
   * change of the merchant's accounts or, for a connected merchant, of its platform's.
   */
  routable(merchantId: string, mode: Mode): Promise<readonly ConnectorAccount[]> {
    const { db } = this.context;
    return this.context.cache.read(`connectorAccounts:${merchantId}:${mode}`, async () => {
      // A merchant's platform is set when it is created, never changed: read with the accounts, it tags them.
      const [accounts, merchant] = await Promise.all([
        db.connectorAccount.findMany({ where: { ...routableBy(merchantId), mode }, orderBy: { createdAt: 'asc' } }),
        db.merchantAccount.findUnique({ where: { id: merchantId }, select: { platformMerchantId: true } }),
      ]);
      const owners = [merchantId, ...(merchant?.platformMerchantId ? [merchant.platformMerchantId] : [])];
      return { value: accounts, tags: merchant === null ? null : owners.map(connectorAccountsTag) };
    });
  }

  /** Of these accounts, the ones a payment of the merchant may be routed to (routableBy), with their mode. */
  routableAmong(merchantId: string, ids: readonly string[]): Promise<Pick<ConnectorAccount, 'id' | 'mode'>[]> {
    return this.context.db.connectorAccount.findMany({ where: { id: { in: [...ids] }, ...routableBy(merchantId) }, select: { id: true, mode: true } });
  }

  /** A client for one account, with its credentials decrypted (they never leave this process). */
  connectorFor(account: Pick<ConnectorAccount, 'connectorName' | 'credentialsEncrypted' | 'mode'>): Connector {
    const built = this.#connectors.get(account);
    if (built !== undefined) return built;
    if (!isConnectorName(account.connectorName)) throw new Error(`unknown connector ${account.connectorName}`);
    const definition: ConnectorDefinition = CONNECTORS[account.connectorName];
    const credentials = definition.credentialsSchema.parse(JSON.parse(this.context.secretBox.open(account.credentialsEncrypted)));
    const { config } = this.context;
    const connector = definition.create(credentials, {
      sandboxUrl: config.SANDBOX_URL,
      stripeApiBase: config.STRIPE_API_BASE,
      adyenCheckoutApiBase: config.ADYEN_CHECKOUT_API_BASE,
      timeoutMs: config.CONNECTOR_TIMEOUT_MS,
      mode: account.mode,
    });
    const instrumented = instrumentConnector(connector, this.context.metrics);
    this.#connectors.set(account, instrumented);
    return instrumented;
  }
}

/**
 * The accounts a merchant's payments may be routed to: its own and, for a connected merchant, its platform's
 * (the platform owns the processor relationship, docs/platforms.md); never a sibling's or another platform's.
 */
function routableBy(merchantId: string): Prisma.ConnectorAccountWhereInput {
  return { OR: [{ merchantId }, { merchant: { connectedMerchants: { some: { id: merchantId } } } }] };
}
