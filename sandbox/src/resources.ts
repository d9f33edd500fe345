// What a sandbox processor keeps: payments, refunds, disputes, saved cards, payouts and wallet sessions, as
// its store (store.ts) holds them and its routes change them; the API's wire shapes are rendered from these
// (render.ts).
import type { CardBrand } from './cards.ts';
import type { DisputeBehaviour, ProcessorError, RefundBehaviour, ResourceError } from './outcomes.ts';
import type { PaymentMethodType } from './processors.ts';
import type { WalletDecision, WalletType } from './wallets.ts';

export type PaymentStatus =
  'requires_device_data' | 'requires_authentication' | 'requires_customer_action' | 'requires_capture' | 'processing' | 'succeeded' | 'failed' | 'canceled';

export type CaptureMethod = 'automatic' | 'manual';

/** What may be shown of a card; the number and CVC are never kept with a payment. */
export interface CardSummary {
  brand: CardBrand;
  last4: string;
  expMonth: number;
  expYear: number;
  holderName: string | null;
}

/** A result already decided but not yet due (a bank debit's or a refund's settlement), applied with whenDue. */
export interface Settlement<Changes> {
  readonly dueMs: number;
  readonly changes: Changes;
}

/** What the customer of a bank transfer or a crypto payment is told to send the money to, with which reference. */
export type Instructions = { reference: string; iban: string } | { reference: string; address: string };

export interface Payment {
  readonly object: 'payment';
  readonly id: string;
  /** The key that created the payment: the only one that sees it. */
  readonly apiKey: string;
  status: PaymentStatus;
  readonly amount: number;
  /**
   * What authorising the payment holds (manual capture) or captures (automatic): its amount, or less for a
   * partial authorization (the partial funds test card, with `partial_authorization: "allowed"`). Decided at
   * creation, so a 3D Secure challenge completed later authorises the same.
   */
  readonly authorizedAmount: number;
  amountCapturable: number;
  amountCaptured: number;
  /** Whether the payment was voided after it succeeded (a card payment's cancel after capture). */
  canceledAfterCapture: boolean;
  readonly currency: string;
  readonly captureMethod: CaptureMethod;
  readonly reference: string | null;
  readonly paymentMethodType: PaymentMethodType;
  /** Set for card payments only, as for each group's summary below. */
  readonly card: CardSummary | null;
  readonly bankDebit: { last4: string } | null;
  readonly instructions: Instructions | null;
  /** The saved card this payment created (setup_future_usage), for later payments of its key. */
  readonly paymentMethodToken: string | null;
  /** What the payment's refunds do, decided by its payment method (its test card) when it was created. */
  readonly refundBehaviour: RefundBehaviour;
  /** Whether the customer's bank disputes the payment once it succeeded, decided likewise. */
  readonly disputeBehaviour: DisputeBehaviour;
  settlement: Settlement<PaymentChanges> | null;
  readonly returnUrl: string;
  error: ProcessorError | null;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewPayment = Omit<Payment, 'object' | 'id' | 'createdMs' | 'updatedMs'>;
export type PaymentChanges = Partial<Pick<Payment, 'status' | 'amountCapturable' | 'amountCaptured' | 'canceledAfterCapture' | 'error'>>;

export type RefundStatus = 'pending' | 'succeeded' | 'failed' | 'requires_review';

/** Money of a succeeded payment given back, all of what was captured or part of it. */
export interface Refund {
  readonly object: 'refund';
  readonly id: string;
  /** The key that created the refund (its payment's key): the only one that sees it. */
  readonly apiKey: string;
  readonly paymentId: string;
  readonly amount: number;
  /** The payment's. */
  readonly currency: string;
  status: RefundStatus;
  readonly reason: string | null;
  readonly reference: string | null;
  error: ResourceError | null;
  /** A pending refund's outcome, as for a payment. */
  settlement: Settlement<RefundChanges> | null;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewRefund = Omit<Refund, 'object' | 'id' | 'createdMs' | 'updatedMs'>;
export type RefundChanges = Partial<Pick<Refund, 'status' | 'error'>>;

export type DisputeStatus = 'needs_response' | 'accepted' | 'under_review' | 'won' | 'lost' | 'expired' | 'cancelled';

/** A succeeded payment's money claimed back by the customer's bank (a chargeback), all of what was captured or part of it. */
export interface Dispute {
  readonly object: 'dispute';
  readonly id: string;
  /** Its payment's key: the only one that sees it. */
  readonly apiKey: string;
  readonly paymentId: string;
  readonly amount: number;
  /** The payment's. */
  readonly currency: string;
  status: DisputeStatus;
  readonly reason: string;
  /** What the merchant submitted to challenge the dispute (`evidence` action), key by key. */
  evidence: Readonly<Record<string, string>> | null;
  /** When the customer's bank opened it; the evidence is due a fixed time after (disputes.ts). */
  readonly createdMs: number;
  updatedMs: number;
}

export type NewDispute = Omit<Dispute, 'object' | 'id' | 'createdMs' | 'updatedMs'>;
export type DisputeChanges = Partial<Pick<Dispute, 'status' | 'evidence'>>;

export type PaymentMethodStatus = 'active' | 'revoked';

/**
 * A card saved with setup_future_usage: a payment method (`payment_method`) its key charges again with the
 * token, until the merchant or the customer's bank revokes it. Only the processor's vault holds its number,
 * as with a real processor: it is never answered.
 */
export interface SavedCard {
  readonly object: 'payment_method';
  /** Its payment_method_token. */
  readonly id: string;
  /** The key that saved it: the only one that sees it and pays with it. */
  readonly apiKey: string;
  readonly number: string;
  readonly card: CardSummary;
  status: PaymentMethodStatus;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewSavedCard = Pick<SavedCard, 'apiKey' | 'number' | 'card'>;
export type SavedCardChanges = Partial<Pick<SavedCard, 'status'>>;

export type PayoutStatus = 'pending' | 'in_transit' | 'paid' | 'failed' | 'cancelled' | 'expired' | 'returned';

/** Money sent from the merchant to a card or a bank account. */
export interface Payout {
  readonly object: 'payout';
  readonly id: string;
  /** The key that created the payout: the only one that sees it. */
  readonly apiKey: string;
  readonly amount: number;
  readonly currency: string;
  status: PayoutStatus;
  /** What may be shown of the destination: the card number and the IBAN are never kept. */
  readonly destination: { type: 'card' | 'bank_account'; last4: string };
  readonly reference: string | null;
  error: ResourceError | null;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewPayout = Omit<Payout, 'object' | 'id' | 'createdMs' | 'updatedMs'>;
export type PayoutChanges = Partial<Pick<Payout, 'status' | 'error'>>;

/** What changes after its creation, maybe away from the caller's requests (then with a callback). */
export type Changeable = Payment | Refund | Dispute | SavedCard | Payout;
/** What may change on `T`. */
export type ChangesOf<T extends Changeable> = {
  payment: PaymentChanges;
  refund: RefundChanges;
  dispute: DisputeChanges;
  payment_method: SavedCardChanges;
  payout: PayoutChanges;
}[T['object']];

/** Everything a route may answer with (an idempotent replay too). */
export type Resource = Changeable | WalletSession;

/** A wallet's payment sheet for one amount: the SDK opens it with `token`, the customer answers in it. */
export interface WalletSession {
  readonly object: 'session';
  readonly id: string;
  readonly apiKey: string;
  readonly wallet: WalletType;
  readonly token: string;
  readonly amount: number;
  readonly currency: string;
  readonly expiresMs: number;
  /** The customer's answer and the single-use payment token it gave the SDK. */
  answer: { decision: WalletDecision; paymentToken: string; used: boolean } | null;
}

export type NewWalletSession = Omit<WalletSession, 'object' | 'id' | 'token' | 'answer'>;
