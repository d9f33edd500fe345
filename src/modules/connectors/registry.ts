// The connectors this service can route to: how to validate an account's credentials, what each accepts
// (payment method types, wallets with sessions), and how to build a client for one account.
// A new processor gets its own folder beside sandbox/ (stripe/, adyen/), with the same files: connector.ts (the
// class implementing port.ts's Connector), wire.ts (its request and response shapes), status-map.ts and
// decline-map.ts (its statuses and failures as ours), callbacks.ts (signature and parsing); then one entry here.
import type { z } from 'zod';
import type { PaymentMethodType } from '../payments/methods.ts';
import type { Connector } from './port.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { AdyenConnector, adyenCredentialsSchema, adyenMissingCredential, checkoutBaseUrl, type AdyenCredentials } from './adyen/connector.ts';
import { credentialsSchemaFor, SandboxConnector, type SandboxCredentials, type SandboxPersonality } from './sandbox/connector.ts';
import { StripeConnector, stripeCredentialsSchema, stripeKeyMode } from './stripe/connector.ts';

export interface ConnectorSettings {
  sandboxUrl: string;
  /** Stripe's API (config STRIPE_API_BASE). */
  stripeApiBase: string;
  /** Adyen's Checkout API for test accounts (config ADYEN_CHECKOUT_API_BASE). */
  adyenCheckoutApiBase: string;
  timeoutMs: number;
  /** The account's mode: a live account is reached at its processor's live endpoint. */
  mode: Mode;
}

export interface ConnectorDefinition<Credentials = unknown> {
  credentialsSchema: z.ZodType<Credentials>;
  paymentMethods: readonly PaymentMethodType[];
  /** Wallet and pay-later providers the connector opens sessions for, by the method type they pay with. */
  wallets: readonly { provider: string; type: 'wallet' | 'pay_later' }[];
  /**
   * The webhook flow categories the connector declares. Informational only (the seed): it never decides
   * whether a callback is accepted, and may be empty while callbacks work (the sandbox's is).
   */
  webhookFlowCategories: readonly ('payments' | 'refunds' | 'disputes' | 'mandates' | 'payouts')[];
  /** Whether the connector can send payouts (to cards and bank accounts). */
  payouts: boolean;
  /**
   * Whether the processor voids a captured payment (cancelPaymentPostCapture). Stripe cancels only an
   * uncaptured PaymentIntent, Adyen's cancel only an authorisation: a captured payment there is refunded instead.
   */
  voidAfterCapture: boolean;
  /** The mode credentials work in, when they say (a Stripe key): an account of the other mode refuses them. */
  modeOf?(credentials: Credentials): Mode;
  /** A credential an account of `mode` cannot work without and lacks (Adyen's live URL prefix): its field and why; null when none. */
  missingIn?(credentials: Credentials, mode: Mode): { field: string; message: string } | null;
  create(credentials: Credentials, settings: ConnectorSettings): Connector;
}

function sandboxProcessor(
  personality: SandboxPersonality,
  capabilities: Pick<ConnectorDefinition, 'paymentMethods' | 'wallets' | 'webhookFlowCategories' | 'payouts'>,
): ConnectorDefinition<SandboxCredentials> {
  return {
    credentialsSchema: credentialsSchemaFor(personality),
    ...capabilities,
    voidAfterCapture: true,
    create: (credentials, settings) => new SandboxConnector(personality, credentials, { baseUrl: settings.sandboxUrl, timeoutMs: settings.timeoutMs }),
  };
}

export const CONNECTORS = {
  sandbox: sandboxProcessor(
    { name: 'sandbox', pathPrefix: '', keyPrefix: 'sk_sandbox_', webhooks: true },
    {
      paymentMethods: ['card', 'bank_debit', 'wallet', 'pay_later', 'bank_redirect', 'bank_transfer', 'crypto'],
      wallets: [
        { provider: 'sandbox_pay', type: 'wallet' },
        { provider: 'sandbox_later', type: 'pay_later' },
      ],
      webhookFlowCategories: [],
      payouts: true,
    },
  ),
  fauxpay: sandboxProcessor(
    { name: 'fauxpay', pathPrefix: '/fauxpay', keyPrefix: 'sk_fauxpay_', webhooks: false },
    { paymentMethods: ['card', 'bank_debit'], wallets: [], webhookFlowCategories: [], payouts: true },
  ),
  stripe: {
    credentialsSchema: stripeCredentialsSchema,
    // Cards (3DS by redirect) and iDEAL (EUR only: the connector refuses other currencies before a call).
    paymentMethods: ['card', 'bank_redirect'],
    wallets: [],
    webhookFlowCategories: ['payments', 'refunds', 'disputes'],
    payouts: false,
    voidAfterCapture: false,
    modeOf: stripeKeyMode,
    create: (credentials, settings) => new StripeConnector(credentials, { apiBase: settings.stripeApiBase, timeoutMs: settings.timeoutMs }),
  } satisfies ConnectorDefinition<z.infer<typeof stripeCredentialsSchema>>,
  adyen: {
    credentialsSchema: adyenCredentialsSchema,
    // Cards (3DS by redirect) and iDEAL; payouts and wallet sessions are other Adyen services.
    paymentMethods: ['card', 'bank_redirect'],
    wallets: [],
    webhookFlowCategories: ['payments', 'refunds', 'disputes'],
    payouts: false,
    voidAfterCapture: false,
    missingIn: adyenMissingCredential,
    create: (credentials, settings) =>
      new AdyenConnector(credentials, {
        baseUrl: checkoutBaseUrl(credentials, settings.mode, settings.adyenCheckoutApiBase),
        timeoutMs: settings.timeoutMs,
        mode: settings.mode,
      }),
  } satisfies ConnectorDefinition<AdyenCredentials>,
} as const satisfies Record<
  string,
  ConnectorDefinition<SandboxCredentials> | ConnectorDefinition<z.infer<typeof stripeCredentialsSchema>> | ConnectorDefinition<AdyenCredentials>
>;

export type ConnectorName = keyof typeof CONNECTORS;

export function isConnectorName(name: string): name is ConnectorName {
  return Object.hasOwn(CONNECTORS, name);
}
