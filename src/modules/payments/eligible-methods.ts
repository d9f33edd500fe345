// What the SDK needs to render a payment sheet: the payment methods this payment can be paid with (the
// merchant's enabled connectors, filtered by the payment's currency, country and capture method), the
// customer's saved cards, and the session tokens wallet and pay-later SDKs start from.
import { ConnectorError } from '../connectors/port.ts';
import { CONNECTORS, isConnectorName } from '../connectors/index.ts';
import { AppError, invalidInput } from '../../kernel/errors.ts';
import { PAYMENT_METHOD_TYPES, paymentMethodGroup, supportsManualCapture, type PaymentMethodGroup, type PaymentMethodType } from './methods.ts';
import type { ConnectorAccount, SavedPaymentMethod } from '../../generated/prisma/client.ts';
import { surchargeFor } from './surcharges.ts';
import { profileById, profileSettings, type ProfileSettings } from '../merchants/index.ts';
import type { ConnectorAccountService } from '../connectors/index.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { CustomerService } from '../customers/index.ts';
import type { Principal } from '../../kernel/principal.ts';
import type { Payment } from './store.ts';
import type { PaymentService } from './service.ts';

/** A wallet or pay-later provider whose SDK starts from a session (paymentSessions). */
export interface WalletProvider {
  provider: string;
  type: 'wallet' | 'pay_later';
}

export interface EligibleMethod {
  type: PaymentMethodType;
  /** The seed's flow row: when the customer acts and when the outcome is final. */
  flow: PaymentMethodGroup;
  /** The connectors that would be tried, in routing order. */
  connectors: string[];
  providers: WalletProvider[];
  /** What the profile's surcharge rule adds to this payment when paid with this method. */
  surchargeAmount: number;
}

export interface PaymentMethodsAnswer {
  payment: Payment;
  methods: EligibleMethod[];
  /** The customer's saved cards usable for this payment (none without a customer). */
  savedCards: SavedPaymentMethod[];
}

export interface SessionAnswer extends WalletProvider {
  connector: string;
  sessionToken: string;
  expiresAt: Date;
}

const MAX_WALLETS = 10;

export class EligibleMethodsService {
  constructor(
    private readonly context: ServiceContext,
    private readonly payments: PaymentService,
    private readonly connectorAccounts: ConnectorAccountService,
    private readonly customers: CustomerService,
  ) {}

  async paymentMethods(principal: Principal, clientSecret: string): Promise<PaymentMethodsAnswer> {
    const payment = await this.visible(principal, clientSecret);
    const settings = await this.settingsOf(payment);
    const routes = await this.routes(payment, settings);
    const methods = [...routes].map(([type, accounts]) => ({
      surchargeAmount: surchargeFor(payment.amount, type, settings.surcharges),
      type,
      flow: paymentMethodGroup(type, payment.authenticationType === 'THREE_DS'),
      connectors: accounts.map((account) => account.connectorName),
      providers: providersOf(accounts, type),
    }));
    const cardAccounts = new Set((routes.get('card') ?? []).map((account) => account.id));
    const savedCards =
      payment.customerId === null
        ? []
        : (await this.customers.savedCards(payment.merchantId, payment.mode, payment.customerId)).filter((saved) => cardAccounts.has(saved.connectorAccountId));
    return { payment, methods, savedCards };
  }

  /** Opens a session for each requested provider (all eligible ones when none are named) at the first connector offering it. */
  async paymentSessions(principal: Principal, clientSecret: string, wallets: readonly string[] | null): Promise<SessionAnswer[]> {
    if (wallets !== null && wallets.length > MAX_WALLETS) throw invalidInput('wallets', `at most ${MAX_WALLETS}`);
    const payment = await this.visible(principal, clientSecret);
    const settings = await this.settingsOf(payment);
    const routes = await this.routes(payment, settings);
    const offered = (['wallet', 'pay_later'] as const).flatMap((type) =>
      (routes.get(type) ?? []).flatMap((account) => providersOf([account], type).map((provider) => ({ ...provider, account }))),
    );
    const requested = wallets ?? [...new Set(offered.map((offer) => offer.provider))];
    const sessions: SessionAnswer[] = [];
    for (const [index, provider] of requested.entries()) {
      const offer = offered.find((candidate) => candidate.provider === provider);
      if (!offer)
        throw invalidInput(
          `wallets.${index}`,
          `${provider} is not offered for this payment (offered: ${[...new Set(offered.map((o) => o.provider))].join(', ') || 'none'})`,
        );
      try {
        // The wallet approves what the customer will pay: the amount with this method's surcharge.
        const amount = payment.amount + surchargeFor(payment.amount, offer.type, settings.surcharges);
        const session = await this.connectorAccounts.connectorFor(offer.account).createSession({ wallet: provider, amount, currency: payment.currency });
        sessions.push({ provider, type: offer.type, connector: offer.account.connectorName, sessionToken: session.sessionToken, expiresAt: session.expiresAt });
      } catch (error) {
        if (error instanceof ConnectorError) throw new AppError('CONNECTOR_ERROR', `The processor could not open a ${provider} session: ${error.message}.`);
        throw error;
      }
    }
    return sessions;
  }

  private async visible(principal: Principal, clientSecret: string): Promise<Payment> {
    return this.payments.getVisible(principal, this.payments.paymentIdOfClientSecret(clientSecret), clientSecret);
  }

  /** The settings of the payment's profile in the payment's mode (its routing and surcharge rules), read once per request. */
  private async settingsOf(payment: Payment): Promise<ProfileSettings> {
    return profileSettings(await profileById(this.context, payment.profileId), payment.mode);
  }

  /** For each method type the payment can use, its connector accounts in routing order. */
  private async routes(payment: Payment, settings: Pick<ProfileSettings, 'routing'>): Promise<Map<PaymentMethodType, ConnectorAccount[]>> {
    const routes = new Map<PaymentMethodType, ConnectorAccount[]>();
    for (const type of PAYMENT_METHOD_TYPES) {
      if (payment.captureMethod === 'MANUAL' && !supportsManualCapture(type)) continue;
      const accounts = await this.connectorAccounts.eligible({
        merchantId: payment.merchantId,
        mode: payment.mode,
        paymentMethodType: type,
        currency: payment.currency,
        country: payment.country,
        paymentConnectors: payment.connectors,
        profileRouting: settings.routing,
      });
      if (accounts.length > 0) routes.set(type, accounts);
    }
    return routes;
  }
}

function providersOf(accounts: readonly ConnectorAccount[], type: PaymentMethodType): WalletProvider[] {
  const providers = accounts.flatMap((account) => (isConnectorName(account.connectorName) ? CONNECTORS[account.connectorName].wallets : []));
  return [...new Map(providers.filter((provider) => provider.type === type).map((provider) => [provider.provider, provider])).values()];
}
