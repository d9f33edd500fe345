// The processors the sandbox server plays, each under its own path prefix with its own keys, payments, saved
// cards, payouts and idempotency records: two personalities let the service's retries across processors be
// tested against behaviour that really differs. One table, so a third personality is one more row.
import type { CardRule } from './cards.ts';
import { APPROVED, failed } from './outcomes.ts';

export const PAYMENT_METHOD_TYPES = ['card', 'bank_debit', 'wallet', 'pay_later', 'bank_redirect', 'bank_transfer', 'crypto'] as const;

export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

export interface Processor {
  name: string;
  /** Where its API is mounted: `<apiPrefix>/payments`, `<apiPrefix>/sessions`, ... */
  apiPrefix: string;
  /** Its secret keys are this prefix and 8 to 64 letters or digits. */
  keyPrefix: string;
  paymentMethodTypes: ReadonlySet<PaymentMethodType>;
  /** Its own card answers, taking precedence over TEST_CARDS. */
  cardRules: readonly CardRule[];
  /** Whether a key may register a callback endpoint (`<apiPrefix>/webhook_endpoints`); without, callers sync payments. */
  webhooks: boolean;
}

export const PROCESSORS: readonly Processor[] = [
  {
    name: 'sandbox',
    apiPrefix: '/v1',
    keyPrefix: 'sk_sandbox_',
    paymentMethodTypes: new Set(PAYMENT_METHOD_TYPES),
    cardRules: [],
    webhooks: true,
  },
  {
    name: 'fauxpay',
    apiPrefix: '/fauxpay/v1',
    keyPrefix: 'sk_fauxpay_',
    paymentMethodTypes: new Set(['card', 'bank_debit']),
    cardRules: [
      // Retryable: the card is fine, another processor may well accept it.
      { brand: 'amex', outcome: failed('card_not_supported', 'American Express cards are not supported.', true) },
      // The sandbox personality's processing error: a card that fails at one processor and works at this one.
      { number: '4000000000000119', outcome: APPROVED },
    ],
    webhooks: false,
  },
];
