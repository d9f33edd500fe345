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
import { CONNECT_ACCOUNT_ID } from './stripe/wire.ts';
import { BALANCE_ACCOUNT_ID } from './adyen/wire.ts';

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

export interface PassThroughCapability {
  accountPattern: RegExp;
  /** The id's shape, as an error names it. */
  accountShape: string;
  maxRecipients: number;
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
  /**
   * How the processor pays a platform's connected merchants their shares of a payment made at the platform's
   * account (docs/platforms.md, "Processor accounts"): the shape of a merchant's account id there, and how many
   * merchants one payment can pay. Absent: the connector passes nothing on (the sandbox: our ledger only).
   */
  passThrough?: PassThroughCapability;
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
    // A destination charge pays one connected account; several would need separate charges and transfers (not built).
    passThrough: { accountPattern: CONNECT_ACCOUNT_ID, accountShape: 'Connect account id (acct_…)', maxRecipients: 1 },
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
    // One split item per recipient, as many as createPayment allows.
    passThrough: { accountPattern: BALANCE_ACCOUNT_ID, accountShape: 'balance account id (BA…)', maxRecipients: Number.POSITIVE_INFINITY },
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

/** How `name` passes a platform's payments on to connected merchants; null when it does not (registry: passThrough). */
export function passThroughOf(name: string): PassThroughCapability | null {
  if (!isConnectorName(name)) return null;
  const definition: Pick<ConnectorDefinition, 'passThrough'> = CONNECTORS[name];
  return definition.passThrough ?? null;
}

/** Why `accountId` cannot be a connected merchant's account at `connector`, naming the field; null when it can. */
export function processorAccountProblem(connector: string, accountId: string): { field: 'connector' | 'accountId'; message: string } | null {
  const passThrough = passThroughOf(connector);
  if (passThrough === null) {
    const names = Object.keys(CONNECTORS).filter((name) => passThroughOf(name) !== null);
    return { field: 'connector', message: `must be a connector that pays connected merchants: ${names.join(', ')}` };
  }
  if (!passThrough.accountPattern.test(accountId)) return { field: 'accountId', message: `must be a ${connector} ${passThrough.accountShape}` };
  return null;
}
