// Routing tests' helpers (docs/routing.md): setting a profile's algorithm, and paying a card payment to see
// where it went, what the payment's routing decision says and which attempts it made.
import {
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  PaymentRoutingDocument,
  SetRoutingAlgorithmDocument,
  type CreatePaymentInput,
  type RoutingAlgorithmInput,
} from '../gql/graphql.ts';
import type { createMerchant } from './api.ts';
import { dataOf } from './graphql-client.ts';

type Merchant = Pick<Awaited<ReturnType<typeof createMerchant>>, 'secret' | 'publishable' | 'profileId'>;

export const ROUTING_CARDS = {
  visa: '4242424242424242',
  mastercard: '5555555555554444',
  /** Succeeds at the sandbox; fauxpay answers card_not_supported, a soft decline sent on to the next account. */
  amex: '378282246310005',
  /** insufficient_funds at both: a hard decline, never sent on. */
  insufficientFunds: '4000000000009995',
} as const;

export async function setAlgorithm(merchant: Merchant, algorithm: RoutingAlgorithmInput) {
  return dataOf(await merchant.secret(SetRoutingAlgorithmDocument, { input: { profileId: merchant.profileId, algorithm } })).setRoutingAlgorithm;
}

/** Creates and confirms (publishable key) a card payment; answers the confirm's result and the payment as the secret key reads it. */
export async function payByCard(merchant: Merchant, number: string = ROUTING_CARDS.visa, input: Partial<CreatePaymentInput> = {}) {
  const created = dataOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'EUR', ...input } })).createPayment;
  const card = { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: number.length === 15 ? '1234' : '123' };
  const result = await merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: { card } } });
  const payment = dataOf(await merchant.secret(PaymentRoutingDocument, { id: created.id })).payment!;
  return { result, payment, clientSecret: created.clientSecret, accounts: payment.attempts.map((attempt) => attempt.connectorAccountId) };
}
