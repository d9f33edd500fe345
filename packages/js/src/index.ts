// The payments SDK: what a merchant's checkout page needs, authorized by the merchant's publishable key and
// one payment's client secret (and nothing else). An ES module with no framework, published as
// @payments-orchestrator/js (docs/sdk.md); the service also serves it bundled at /sdk/payments.js.
//
//   const payments = createPaymentsClient({ publishableKey, clientSecret });
//   const { methods } = await payments.paymentMethods();
//   const payment = await payments.confirm({ paymentMethodData: { card } });
//   if (!payments.handleNextAction(payment)) show(payment.status);
// The service's own card rules, bundled into the package by its build: one source of truth (docs/sdk.md).
import { cardProblem, type CardInput } from '../../../src/kernel/cards.ts';
import {
  SdkConfirmPaymentDocument,
  SdkPaymentDocument,
  SdkPaymentMethodsDocument,
  SdkPaymentSessionsDocument,
  SdkPaymentUpdatedDocument,
  type ConfirmPaymentInput,
  type SdkPaymentFragment,
  type SdkPaymentMethodsQuery,
  type SdkPaymentSessionsQuery,
} from './gql/graphql.ts';
import { ApiError, createTransport, type TransportSettings } from '@payments-orchestrator/client-core';

export { ApiError } from '@payments-orchestrator/client-core';
export type { CardInput } from '../../../src/kernel/cards.ts';
export type SdkPayment = SdkPaymentFragment;
export type PaymentMethods = SdkPaymentMethodsQuery['paymentMethods'];
export type PaymentSession = SdkPaymentSessionsQuery['paymentSessions'][number];
export type ConfirmInput = Omit<ConfirmPaymentInput, 'clientSecret'>;

/**
 * The first rule a card breaks, checked in the browser before it is sent (the service checks it again):
 * the check digit (Luhn), the length, the expiry against today and the CVC length for the brand. The message
 * names the rule, never the number.
 */
export function checkCard(card: CardInput, now = new Date()): { field: string; message: string } | null {
  return cardProblem(card, now);
}

/** A client secret is `<payment id>_secret_<random>`. */
export function paymentIdOf(clientSecret: string): string {
  const at = clientSecret.lastIndexOf('_secret_');
  if (at <= 0) throw new ApiError('The client secret is not one the API issued.', { code: 'INVALID_INPUT', field: 'clientSecret' });
  return clientSecret.slice(0, at);
}

export interface PaymentsClientOptions extends TransportSettings {
  publishableKey: string;
  clientSecret: string;
}

export interface PaymentsClient {
  readonly paymentId: string;
  payment(): Promise<SdkPayment>;
  /** What the customer may pay with: eligible method types by group, and the customer's saved cards. */
  paymentMethods(): Promise<PaymentMethods>;
  /** Sessions for wallet and pay-later sheets (their answer is the paymentToken to confirm with). */
  paymentSessions(wallets?: string[]): Promise<PaymentSession[]>;
  /** Confirms with a method; a decline rejects with ApiError code PAYMENT_DECLINED (and the payment may be tried again). */
  confirm(input: ConfirmInput): Promise<SdkPayment>;
  /**
   * Follows the payment's next action when it is a redirect (3D Secure, a bank): navigates and returns true.
   * Returns false when there is nothing to follow (instructions to show, or no action).
   */
  handleNextAction(payment: SdkPayment, navigate?: (url: string) => void): boolean;
  /** Calls `listener` with the payment on every committed change; returns the function that stops it. */
  onUpdate(listener: (payment: SdkPayment) => void, onError?: (error: ApiError) => void): () => void;
  close(): Promise<void>;
}

function browserNavigate(url: string): void {
  const location = (globalThis as { location?: { assign(url: string): void } }).location;
  if (!location) throw new Error('handleNextAction needs a navigate function outside a browser page.');
  location.assign(url);
}

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  const { publishableKey, clientSecret, ...transportOptions } = options;
  const paymentId = paymentIdOf(clientSecret);
  const api = createTransport({ ...transportOptions, apiKey: publishableKey });
  return {
    paymentId,
    payment: async () => (await api.request(SdkPaymentDocument, { id: paymentId, clientSecret })).payment,
    paymentMethods: async () => (await api.request(SdkPaymentMethodsDocument, { clientSecret })).paymentMethods,
    paymentSessions: async (wallets) => (await api.request(SdkPaymentSessionsDocument, { clientSecret, wallets: wallets ?? null })).paymentSessions,
    confirm: async (input) => (await api.request(SdkConfirmPaymentDocument, { input: { ...input, clientSecret } })).confirmPayment,
    handleNextAction(payment, navigate = browserNavigate) {
      if (payment.nextAction?.type !== 'REDIRECT_TO_URL') return false;
      navigate(payment.nextAction.redirectToUrl);
      return true;
    },
    onUpdate: (listener, onError) =>
      api.subscribe(
        SdkPaymentUpdatedDocument,
        { paymentId, clientSecret },
        { next: (data) => listener(data.paymentUpdated), ...(onError ? { error: onError } : {}) },
      ),
    close: () => api.close(),
  };
}
