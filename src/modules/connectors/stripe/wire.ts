// Stripe's wire format: the objects of its API (docs.stripe.com/api) as far as the connector reads them (zod:
// anything else is not an answer), and the request fields it is sent. The requests themselves are encoded and
// sent by Stripe's official library (connector.ts).
import { z } from 'zod';
import { ConnectorError, type AuthorizeRequest, type PaymentMethod, type PaymentSplit, type RefundSplit } from '../port.ts';
import { notSupported } from '../not-supported.ts';

/** Text Stripe sends that may be stored: bounded, without NUL, well-formed (PostgreSQL holds neither). */
const stripeText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL')
    .refine((value) => value.isWellFormed(), 'must be well-formed Unicode');
const stripeId = stripeText(255).pipe(z.string().min(1));
/** Amounts in minor units, within the database's integer range. */
const stripeAmount = z.number().int().nonnegative().max(2_147_483_647);
/** Our reference (an attempt or refund id), kept in the object's metadata. */
const metadata = z.object({ reference: stripeText(100).optional() }).catchall(z.unknown());

/** A failure as Stripe reports it: `last_payment_error` of an intent, or the `error` of a refused request. */
export const stripeErrorSchema = z
  .object({
    type: stripeText(100),
    code: stripeText(100).nullish(),
    decline_code: stripeText(100).nullish(),
    message: stripeText(1000).nullish(),
    // The rest as Stripe sent it (param, doc_url, request_log_url, ...): kept, scrubbed, on the failed attempt.
  })
  .catchall(z.unknown());
export type StripeError = z.infer<typeof stripeErrorSchema>;

export const PAYMENT_INTENT_STATUSES = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'processing',
  'requires_capture',
  'succeeded',
  'canceled',
] as const;

/** A PaymentIntent (docs.stripe.com/api/payment_intents/object). */
export const paymentIntentSchema = z.object({
  id: stripeId,
  object: z.literal('payment_intent'),
  status: z.enum(PAYMENT_INTENT_STATUSES),
  amount: stripeAmount,
  amount_capturable: stripeAmount,
  amount_received: stripeAmount,
  next_action: z
    .object({ type: stripeText(100), redirect_to_url: z.object({ url: stripeText(2048) }).nullish() })
    .catchall(z.unknown())
    .nullish(),
  last_payment_error: stripeErrorSchema.nullish(),
  /**
   * The charge that took the money: its id, or (asked with EXPAND_SETTLEMENT) the charge with its balance transaction,
   * whose `available_on` (unix seconds) says when the money settles (docs.stripe.com/api/balance_transactions/object).
   */
  latest_charge: z
    .union([
      stripeId,
      z.object({
        id: stripeId,
        object: z.literal('charge'),
        balance_transaction: z
          .union([stripeId, z.object({ id: stripeId, object: z.literal('balance_transaction'), available_on: z.number().int().min(0).max(253_402_300_799) })])
          .nullish(),
      }),
    ])
    .nullish(),
  /** Ids, as Stripe sends them unless asked to expand them (we never do). */
  customer: stripeId.nullish(),
  payment_method: stripeId.nullish(),
  setup_future_usage: z.enum(['on_session', 'off_session']).nullish(),
  metadata,
});
export type StripePaymentIntent = z.infer<typeof paymentIntentSchema>;

export const REFUND_STATUSES = ['pending', 'requires_action', 'succeeded', 'failed', 'canceled'] as const;

/** A Refund (docs.stripe.com/api/refunds/object). */
export const refundSchema = z.object({
  id: stripeId,
  object: z.literal('refund'),
  status: z.enum(REFUND_STATUSES),
  amount: stripeAmount,
  failure_reason: stripeText(100).nullish(),
  metadata,
});
export type StripeRefund = z.infer<typeof refundSchema>;

export const DISPUTE_STATUSES = [
  'warning_needs_response',
  'warning_under_review',
  'warning_closed',
  'needs_response',
  'under_review',
  'won',
  'lost',
  'prevented',
] as const;

/** A Dispute (docs.stripe.com/api/disputes/object). */
export const disputeSchema = z.object({
  id: stripeId,
  object: z.literal('dispute'),
  payment_intent: stripeId,
  status: z.enum(DISPUTE_STATUSES),
  amount: stripeAmount,
  currency: z.string().regex(/^[a-z]{3}$/),
  reason: stripeText(100).nullable(),
  evidence_details: z.object({ due_by: z.number().int().min(0).max(253_402_300_799).nullable(), submission_count: z.number().int().nonnegative() }).nullish(),
});
export type StripeDispute = z.infer<typeof disputeSchema>;

/** An Event (docs.stripe.com/api/events/object): its object is read by callbacks.ts according to its type. */
export const eventSchema = z.object({
  id: z.string().regex(/^[\x21-\x7e]{1,255}$/),
  type: z.string().regex(/^[\x21-\x7e]{1,100}$/),
  /** When Stripe made the event (unix seconds). */
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.object({ object: z.string() }).catchall(z.unknown()) }),
});

/** A Customer (docs.stripe.com/api/customers/object): only its id is read. */
export const customerSchema = z.object({ id: stripeId, object: z.literal('customer') });

/** A cvc_update Token (docs.stripe.com/api/tokens/create_cvc_update): the CVC re-collected for a saved card. */
export const cvcTokenSchema = z.object({ id: stripeId, object: z.literal('token') });

/**
 * Our token of a card saved at Stripe: `<customer id>:<payment method id>` (`cus_…:pm_…`). Stripe charges a saved
 * PaymentMethod again only with the Customer it is attached to (docs.stripe.com/payments/save-during-payment), so
 * the token carries both. The product seals it at rest.
 */
const SAVED_CARD_TOKEN = /^(cus_[A-Za-z0-9]+):(pm_[A-Za-z0-9]+)$/;

/** The token of a card saved at Stripe; null when Stripe's ids are not of the shape every later charge will need. */
export function savedCardToken(customerId: string, paymentMethodId: string): string | null {
  const token = `${customerId}:${paymentMethodId}`;
  return SAVED_CARD_TOKEN.test(token) ? token : null;
}

export function savedCardIds(token: string): { customer: string; paymentMethod: string } {
  const match = SAVED_CARD_TOKEN.exec(token);
  // Never ours: a saved card is only ever charged at the account that saved it (routing), with the token made here.
  if (match === null)
    throw new ConnectorError('stripe: the saved card token is not one this connector made', 'rejected', false, { processorCode: 'invalid_token' });
  return { customer: match[1]!, paymentMethod: match[2]! };
}

/** What the calls that may learn of a capture expand: the charge's balance transaction, to read when the money settles. */
export const EXPAND_SETTLEMENT = 'latest_charge.balance_transaction';

/**
 * A platform's payment for one connected merchant as a destination charge (docs.stripe.com/connect/destination-charges):
 * the charge made on the platform's account, its amount less `application_fee_amount` transferred to the merchant's
 * Connect account. Stripe transfers to one account per charge: several are refused before routing (registry.ts).
 */
export function destinationCharge(split: PaymentSplit | undefined) {
  if (split === undefined) return {};
  const [recipient, ...more] = split.recipients;
  if (recipient === undefined || more.length > 0) throw unsupported('paying several connected accounts from one payment');
  return {
    transfer_data: { destination: recipient.accountId },
    ...(split.platformAmount > 0 ? { application_fee_amount: split.platformAmount } : {}),
  };
}

/**
 * A refund of a destination charge taken back from the connected account too (docs.stripe.com/connect/destination-charges#issue-refunds):
 * the transfer reversed and the application fee refunded, each by Stripe in proportion to the amount refunded, so the
 * platform and the connected account each give back their share (within a unit of the ledger's: docs/connectors/stripe.md).
 * The fee only when the charge has one: Stripe refuses to refund a fee a charge does not have.
 */
export function refundOfDestinationCharge(split: RefundSplit | undefined) {
  if (split === undefined) return {};
  return { reverse_transfer: true, ...(split.charge.platformAmount > 0 ? { refund_application_fee: true } : {}) };
}

/** A Stripe Connect account's id (docs.stripe.com/api/accounts/object): a connected merchant's, paid by destination charges. */
export const CONNECT_ACCOUNT_ID = /^acct_[A-Za-z0-9]{1,250}$/;

/** A WebhookEndpoint as created: the only time Stripe shows its signing secret. */
export const webhookEndpointSchema = z.object({ id: stripeId, secret: z.string().startsWith('whsec_') });

/** The events the registered endpoint receives: those callbacks.ts reads. */
export const ENABLED_EVENTS = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
  'payment_intent.requires_action',
  'payment_intent.amount_capturable_updated',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
] as const;

/**
 * The banks Stripe takes for iDEAL, by its names (docs.stripe.com/api/payment_methods/object#payment_method_object-ideal-bank).
 * This file is pure and cannot import the library; connector.ts checks at compile time that the list is exactly the
 * library's type of them, so a bank Stripe adds or drops fails to compile.
 */
export const IDEAL_BANKS = [
  'abn_amro',
  'adyen',
  'asn_bank',
  'bunq',
  'buut',
  'finom',
  'handelsbanken',
  'ing',
  'knab',
  'mollie',
  'moneyou',
  'n26',
  'nn',
  'rabobank',
  'regiobank',
  'revolut',
  'sns_bank',
  'triodos_bank',
  'van_lanschot',
  'yoursafe',
] as const;
export type IdealBank = (typeof IDEAL_BANKS)[number];
const isIdealBank = (bank: string): bank is IdealBank => (IDEAL_BANKS as readonly string[]).includes(bank);

/**
 * Why Stripe would refuse this payment's method as asked, before any call; null when it may be sent. iDEAL
 * (our bank_redirect) is paid in euros only and settles at once, without a separate capture
 * (docs.stripe.com/payments/ideal).
 */
export function methodRefusal(request: Pick<AuthorizeRequest, 'paymentMethod' | 'currency' | 'captureMethod'>): ConnectorError | null {
  const method = request.paymentMethod;
  if (method.type === 'card' || method.type === 'saved_card') return null;
  if (method.type !== 'bank_redirect') return unsupported(`${method.type} payments`);
  if (request.currency.toUpperCase() !== 'EUR')
    return new ConnectorError(`stripe: iDEAL takes payments in EUR only, not ${request.currency.toUpperCase()}`, 'rejected', false, {
      processorCode: 'currency_not_supported',
      declineCode: 'currency_not_supported',
    });
  if (request.captureMethod === 'MANUAL') return unsupported('manual captures of iDEAL payments');
  if (!isIdealBank(method.bank))
    return new ConnectorError(`stripe: iDEAL has no bank named ${method.bank}; Stripe's are ${IDEAL_BANKS.join(', ')}`, 'rejected', false, {
      processorCode: 'bank_not_supported',
    });
  return null;
}

/**
 * `payment_method_data` for a new method methodRefusal let through: a card sent as raw card data (Stripe accepts it in
 * test mode, and in live mode from accounts Stripe has enabled for it), or iDEAL with the customer's bank.
 */
export function paymentMethodData(method: Exclude<PaymentMethod, { type: 'saved_card' }>) {
  if (method.type === 'bank_redirect') return { type: 'ideal' as const, ideal: { bank: method.bank } };
  if (method.type !== 'card') throw unsupported(`${method.type} payments`);
  const { card } = method;
  return {
    type: 'card' as const,
    card: { number: card.number, exp_month: card.expiryMonth, exp_year: card.expiryYear, cvc: card.cvc },
    ...(card.holderName ? { billing_details: { name: card.holderName } } : {}),
  };
}

/** A refusal for what this connector does not do: nothing was sent, and no other try at Stripe would differ. */
export const unsupported = (what: string) => notSupported('stripe', what);
