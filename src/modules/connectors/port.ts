// The connector interface: what the payments service needs from any processor. Each implementation, in its
// own folder (sandbox/; registry.ts says what goes in one), knows its processor's wire format and nothing of
// GraphQL or the database.
import type { ProcessorPaymentStatus } from '../payments/machine/attempt.ts';
import type { ProcessorDisputeStatus } from '../disputes/machine.ts';
import type { ProcessorPayoutStatus } from '../payouts/machine.ts';
import type { ProcessorRefundStatus } from '../refunds/machine.ts';
import type { PaymentMethodType } from '../payments/methods.ts';
import type { CaptureMethod } from '../payments/machine/statuses.ts';
import type { DeclineCode } from '../../kernel/declines.ts';
import { maskCardNumbers, processorErrorBody, type ProcessorErrorBody } from '../../kernel/processor-error-body.ts';

export interface CardDetails {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  cvc: string;
  holderName?: string | null;
}

/** What the customer pays with, as the processor needs it (secrets included: never stored or logged). */
export type PaymentMethod =
  | { type: 'card'; card: CardDetails }
  /**
   * A card the processor keeps for us: its reusable token and the CVC the customer typed again, or no CVC
   * for a merchant-initiated payment under a mandate (off session: the customer is not there).
   */
  | { type: 'saved_card'; token: string; cvc: string | null }
  | { type: 'bank_debit'; accountHolderName: string; iban: string }
  /** Wallets and pay-later: the token the provider's sheet gave the SDK for a session (paymentSessions). */
  | { type: 'wallet' | 'pay_later'; provider: string; paymentToken: string }
  | { type: 'bank_redirect'; bank: string }
  | { type: 'bank_transfer' }
  | { type: 'crypto'; network: string };

/** The public type of a method: a saved card is a card. */
export const methodTypeOf = (method: PaymentMethod): PaymentMethodType => (method.type === 'saved_card' ? 'card' : method.type);

export interface AuthorizeRequest {
  /** Our attempt id: the processor's reference and the idempotency key of the call. */
  reference: string;
  amount: number;
  currency: string;
  captureMethod: CaptureMethod;
  threeDs: boolean;
  paymentMethod: PaymentMethod;
  /** Ask the processor for a reusable token of the card (setup for future use). */
  saveCard: boolean;
  /** Let the processor authorize less than the amount (manual capture only; the profile allows it). */
  allowPartialAuthorization: boolean;
  /** Where the processor sends the customer back after a redirect (our redirect-response route). */
  returnUrl: string;
  /** What the processor pays other merchants of the amount; absent when it all stays with the account's owner. */
  split?: PaymentSplit;
}

/**
 * A platform's payment shared at the processor (docs/platforms.md, "Processor accounts"): its connected merchants'
 * shares paid to their own accounts there, the rest kept by the account's owner, the platform. The amounts add up
 * to the amount charged.
 */
export interface PaymentSplit {
  /** What stays with the platform: its fee, and its own share of a payment of its own. */
  platformAmount: number;
  /** Every other merchant's share, with its account at this processor. */
  recipients: readonly { merchantId: string; accountId: string; amount: number }[];
}

/**
 * A refund of a payment paid on at the processor (AuthorizeRequest.split): what each party gives back of it (the
 * ledger's step of the refund: docs/ledger.md), and the split of the charge it refunds (what was captured of it).
 */
export interface RefundSplit {
  refund: PaymentSplit;
  charge: PaymentSplit;
  /** Our id of the attempt the charge was made by: the reference its split was sent under (Adyen asks a refund to name the same). */
  chargeReference: string;
}

/** What the customer must do at the processor after confirm. */
export type ProcessorNextAction =
  | { type: 'redirect'; url: string }
  /** Transfer instructions (a reference, an account or address, the amount), shown on the processor's page too. */
  | { type: 'display_instructions'; url: string; instructions: Record<string, string | number> };

/** What a processor needs to finish a payment the customer came back to from its redirect. */
export interface RedirectCompletion {
  /** Our attempt id (the authorization's reference). */
  reference: string;
  redirectResult: string;
  captureMethod: CaptureMethod;
  /** The amount the authorization asked for. */
  amount: number;
}

export interface CapturedPayment {
  currency: string;
  charged: number;
  /** Our id of the attempt: the reference the authorization (and its split) was sent under. */
  reference: string;
  /**
   * Of a capture of less than `charged` of a payment paid on at the processor: what each party is paid of the capture
   * (the ledger's shares of it), where authorization fixed them for all `charged`. Absent otherwise.
   */
  split?: PaymentSplit;
}

/** A processor's view of a payment, normalised. */
export interface ProcessorPayment {
  transactionId: string;
  status: ProcessorPaymentStatus;
  amountCapturable: number;
  amountCaptured: number;
  nextAction: ProcessorNextAction | null;
  /** A reusable token of the card, when one was asked for. */
  paymentMethodToken: string | null;
  error: PaymentError | null;
  /**
   * When the captured money settles, for a processor that reports settlement after capture (docs/ledger.md):
   * it stays pending in the merchants' balances until then. Absent: available at capture.
   */
  fundsAvailableAt?: Date;
}

/**
 * Why a payment failed: the decline catalog's code (src/kernel/declines.ts, which also says whether another processor
 * may be tried), the processor's own code as it sent it (null when it sent none), its message (card numbers masked:
 * maskCardNumbers), and the error body it sent, scrubbed (processorErrorBody: no card data, no secrets; null when it
 * sent none).
 */
export interface PaymentError {
  code: DeclineCode;
  processorCode: string | null;
  message: string;
  processorBody: ProcessorErrorBody | null;
}

export interface RefundRequest {
  /** The processor's id of the payment whose capture is refunded. */
  transactionId: string;
  amount: number;
  currency: string;
  reason: string | null;
  /** Our refund id: the processor's reference and the idempotency key of the call. */
  reference: string;
  /** Of a payment paid on at the processor: who gives back what of the refund. Absent when it all came from the account's owner. */
  split?: RefundSplit;
}

/** A processor's view of a refund, normalised. */
export interface ProcessorRefund {
  refundId: string;
  status: ProcessorRefundStatus;
  amount: number;
  error: { code: string; message: string } | null;
}

/** A processor's view of a dispute (chargeback), normalised. */
export interface ProcessorDispute {
  disputeId: string;
  /** The processor's id of the disputed payment. */
  transactionId: string;
  status: ProcessorDisputeStatus;
  amount: number;
  currency: string;
  reason: string | null;
  evidenceDueBy: Date | null;
}

/** Where a payout sends the money (secrets included: never stored or logged). */
export type PayoutDestination = { type: 'card'; card: Omit<CardDetails, 'cvc'> } | { type: 'bank_account'; accountHolderName: string; iban: string };

export interface PayoutRequest {
  /** Our payout id: the processor's reference and the idempotency key of the call. */
  reference: string;
  amount: number;
  currency: string;
  destination: PayoutDestination;
  description: string | null;
}

/** A processor's view of a payout, normalised. */
export interface ProcessorPayout {
  payoutId: string;
  status: ProcessorPayoutStatus;
  error: { code: string; message: string } | null;
}

/** A session a wallet or pay-later SDK needs before the customer can approve in its sheet. */
export interface WalletSession {
  wallet: string;
  sessionToken: string;
  expiresAt: Date;
}

/**
 * A call that did not produce a processor answer. `outcomeUnknown` says whether the processor may have
 * acted (timeout, 5xx): then the payment stays pending and is synced, never failed by guess.
 */
export class ConnectorError extends Error {
  /** The processor's own code, as it sent it. */
  readonly processorCode?: string;
  /** The HTTP status the processor answered with, when it answered one: routing counts only a 5xx as the processor failing. */
  readonly httpStatus?: number;
  /**
   * The decline catalog's code of a refusal that reads as a decline, made before any payment existed (a card number
   * or expiry date the processor would not take, a currency it does not take): so a hard one is never sent on.
   */
  readonly declineCode?: DeclineCode;
  /**
   * The error body the processor answered with, scrubbed (processorErrorBody); null when it sent none. Not enumerable,
   * so a log line given the error (pino copies an error's enumerable fields) never carries it.
   */
  declare readonly processorBody: ProcessorErrorBody | null;

  constructor(
    message: string,
    /**
     * `rejected`: the processor refused the request or the resource's state (a decline-like answer about the
     * payment); `unauthorized`: it refused our credentials (the merchant's connector setup). Both did nothing.
     */
    readonly kind: 'timeout' | 'unreachable' | 'server_error' | 'bad_response' | 'rejected' | 'unauthorized',
    readonly outcomeUnknown: boolean,
    details: ConnectorErrorDetails = {},
  ) {
    // Its message quotes the processor's, which is logged and shown: a card number in it is masked.
    super(maskCardNumbers(message));
    this.name = 'ConnectorError';
    if (details.processorCode !== undefined) this.processorCode = details.processorCode;
    if (details.declineCode !== undefined) this.declineCode = details.declineCode;
    if (details.httpStatus !== undefined) this.httpStatus = details.httpStatus;
    Object.defineProperty(this, 'processorBody', { value: processorErrorBody(details.body), enumerable: false });
  }
}

/** What a ConnectorError may carry besides its message, kind and outcome: each only when the processor's answer gave it. */
export interface ConnectorErrorDetails {
  /** The processor's own code. */
  processorCode?: string | undefined;
  /** The catalog's code, of a refusal that reads as a decline (ConnectorError.declineCode). */
  declineCode?: DeclineCode | undefined;
  /** The processor's error body as it sent it (parsed JSON), scrubbed by the constructor before anything else holds it. */
  body?: unknown;
  /** The HTTP status of the processor's answer (ConnectorError.httpStatus). */
  httpStatus?: number | undefined;
}

/**
 * A refusal's code as the payment's `errorCode` shows it (docs/declines.md): the catalog's code when the refusal is
 * about the card, else `connector_error` (the processor's own code is the payment's `processorErrorCode`).
 */
export const refusalCodeOf = (error: ConnectorError): string => error.declineCode ?? 'connector_error';

/**
 * Currencies whose minor unit Stripe and Adyen both count as ISO 4217 does (src/kernel/money.ts), so an amount
 * passes through unchanged. Elsewhere the processors differ from ISO and from each other (ISK, CLP, CVE, MGA, HUF,
 * three-decimal currencies, …); until their connectors convert between exponents they take only these, and any
 * other currency is refused before a call (docs/connectors/stripe.md, docs/connectors/adyen.md).
 */
const SAME_MINOR_UNIT_CURRENCIES: ReadonlySet<string> = new Set([
  'AED',
  'AUD',
  'BRL',
  'CAD',
  'CHF',
  'CZK',
  'DKK',
  'EUR',
  'GBP',
  'HKD',
  'INR',
  'JPY',
  'KRW',
  'MXN',
  'NOK',
  'NZD',
  'PLN',
  'SEK',
  'SGD',
  'USD',
  'ZAR',
]);

/** A refusal, before any call, of a currency whose amounts `processor` would read in another unit; null when it is safe. */
export function unsafeCurrencyRefusal(processor: string, currency: string): ConnectorError | null {
  if (SAME_MINOR_UNIT_CURRENCIES.has(currency.toUpperCase())) return null;
  return new ConnectorError(
    `${processor} is not yet used for payments in ${currency.toUpperCase()}: its minor unit differs from ISO 4217's`,
    'rejected',
    false,
    { processorCode: 'currency_not_supported', declineCode: 'currency_not_supported' },
  );
}

export interface Connector {
  readonly name: string;
  authorize(request: AuthorizeRequest): Promise<ProcessorPayment>;
  /**
   * `payment`: its currency and what it charges (amount and surcharge), for processors that want the currency
   * with the amount or report a capture without saying whether it was partial (Adyen).
   */
  capture(transactionId: string, amount: number, idempotencyKey: string, payment: CapturedPayment): Promise<ProcessorPayment>;
  void(transactionId: string, idempotencyKey: string): Promise<ProcessorPayment>;
  sync(transactionId: string): Promise<ProcessorPayment>;
  /**
   * The payment after the customer came back from the processor's redirect with `redirectResult` (Adyen's
   * return parameter): for processors that finish the payment with it rather than by sync.
   */
  completeRedirect?(request: RedirectCompletion): Promise<ProcessorPayment>;
  /** The payment created for `reference`, when a call's answer was lost (timeout); null if none was created. */
  findByReference(reference: string): Promise<ProcessorPayment | null>;
  refund(request: RefundRequest): Promise<ProcessorRefund>;
  syncRefund(refundId: string): Promise<ProcessorRefund>;
  /**
   * The refund created for `reference` (our refund id) of the payment `transactionId` (the processor's id), when a
   * call's answer was lost; null if none was created.
   */
  findRefundByReference(reference: string, transactionId: string): Promise<ProcessorRefund | null>;
  /** Concedes a dispute. */
  acceptDispute(disputeId: string, idempotencyKey: string): Promise<ProcessorDispute>;
  /** Challenges a dispute with the merchant's evidence (named text fields). */
  submitDisputeEvidence(disputeId: string, evidence: Record<string, string>, idempotencyKey: string): Promise<ProcessorDispute>;
  createPayout(request: PayoutRequest): Promise<ProcessorPayout>;
  /** Cancels a payout not yet sent. */
  cancelPayout(payoutId: string, idempotencyKey: string): Promise<ProcessorPayout>;
  syncPayout(payoutId: string): Promise<ProcessorPayout>;
  /** The payout created for `reference` (our payout id), when a call's answer was lost; null if none was created. */
  findPayoutByReference(reference: string): Promise<ProcessorPayout | null>;
  /** A session for one of the connector's wallets (ConnectorDefinition.wallets). */
  createSession(request: { wallet: string; amount: number; currency: string }): Promise<WalletSession>;
  /** The processor's callbacks; absent when the connector has none (its payments rely on sync). */
  readonly webhooks?: ConnectorWebhooks;
}

/**
 * A processor's callback, verified and read: the payment, refund or dispute it is about, as the processor sees it
 * now. `reference` is ours (an attempt or refund id) as the processor echoes it, to find a resource whose
 * call timed out before the processor's id was known.
 */
export type ConnectorCallback = {
  /** The processor's own id of the event, for the callback log. */
  eventId: string;
  /** The processor's event name, as sent (`payment.succeeded`). */
  eventType: string;
  reference: string | null;
  /** Of a body that batches several events (Adyen's): this event's own JSON, kept by its row of the callback log. */
  itemBody?: string;
} & (
  | { kind: 'payment'; payment: ProcessorPayment }
  | { kind: 'refund'; refund: ProcessorRefund }
  | { kind: 'dispute'; dispute: ProcessorDispute }
  | { kind: 'payout'; payout: ProcessorPayout }
  /** A saved card's reusable token, revoked at the processor (the customer withdrew the mandate at their bank). */
  | { kind: 'payment_method'; token: string; status: 'active' | 'revoked' }
);

/** An event of a verified callback that is acknowledged but not applied, and why. */
export interface IgnoredCallback {
  kind: 'ignored';
  eventId: string;
  eventType: string;
  /**
   * `other_merchant_account`: for another account at the processor that shares the signing key (Adyen's company-level
   * webhooks); `mode_mismatch`: from the processor's test environment for a live account, or its live one for a test account.
   */
  reason: 'unrecognised_event' | 'other_merchant_account' | 'mode_mismatch';
  /** Of `other_merchant_account`: the processor's account the event was for, for the operator's warning. */
  processorAccount?: string;
  /** As ConnectorCallback's. */
  itemBody?: string;
}

/** The events of a callback whose body carries one (`callback`, or none when null): Stripe's and the sandbox's. */
export const singleEvent = (callback: ConnectorCallback | null): (ConnectorCallback | IgnoredCallback)[] => (callback === null ? [] : [callback]);

export interface ConnectorWebhooks {
  /**
   * Whether `headers` carry the processor's signature of exactly `rawBody` under `secret` (constant time); for a
   * body of several events (Adyen's batches), whether every one of them is signed.
   */
  verify(rawBody: Buffer, headers: Readonly<Record<string, string | undefined>>, secret: string, now: Date): boolean;
  /**
   * The events a verified callback reports, in the order sent (Adyen batches several per request; Stripe and the
   * sandbox send one): each to apply, or ignored with why. Empty when the body holds no event the connector knows.
   */
  parse(rawBody: Buffer): (ConnectorCallback | IgnoredCallback)[];
  /** The text body the processor requires in answer to a callback it must not send again (Adyen: `[accepted]`). */
  readonly acknowledgement?: string;
  /**
   * Points the processor's callbacks for this account at `url`, signed with `secret`, or with the secret the
   * processor made itself and returns (Stripe's), which then replaces the account's.
   */
  register(url: string, secret: string): Promise<{ endpointId: string; secret?: string }>;
}
