// A sandbox processor's memory: payments and refunds by id, each visible only to the API key that created it,
// each key's saved cards, wallet sessions and idempotency records. Nothing survives a restart, like a test-mode
// account that is reset. Each processor personality has a store of its own. Its only background work is
// applying a settlement (a bank debit's, a refund's) when it falls due.
import { createHash, randomBytes } from 'node:crypto';
import { randomBase62 } from '../domain/ids.ts';
import type { CardBrand } from './cards.ts';
import type { ProcessorError, RefundBehaviour, RefundError } from './outcomes.ts';
import type { PaymentMethodType } from './processors.ts';
import type { WalletDecision, WalletType } from './wallets.ts';

export type PaymentStatus =
  | 'requires_device_data'
  | 'requires_authentication'
  | 'requires_customer_action'
  | 'requires_capture'
  | 'processing'
  | 'succeeded'
  | 'failed'
  | 'canceled';

export type CaptureMethod = 'automatic' | 'manual';

/** What may be shown of a card; the number and CVC are never kept with a payment. */
export interface CardSummary {
  brand: CardBrand;
  last4: string;
  expMonth: number;
  expYear: number;
  holderName: string | null;
}

/**
 * A result already decided but not yet due (a bank debit's or a refund's settlement). It is applied once, by
 * whichever comes first: a timer at `dueMs` (so its callback goes out with no read at all) or the first read
 * after `dueMs` (so a test that moves the clock sees it without waiting for the timer).
 */
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
  amountCapturable: number;
  amountCaptured: number;
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
  settlement: Settlement<PaymentChanges> | null;
  readonly returnUrl: string;
  error: ProcessorError | null;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewPayment = Omit<Payment, 'object' | 'id' | 'createdMs' | 'updatedMs'>;
export type PaymentChanges = Partial<Pick<Payment, 'status' | 'amountCapturable' | 'amountCaptured' | 'error'>>;

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
  error: RefundError | null;
  /** A pending refund's outcome, as for a payment. */
  settlement: Settlement<RefundChanges> | null;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewRefund = Omit<Refund, 'object' | 'id' | 'createdMs' | 'updatedMs'>;
export type RefundChanges = Partial<Pick<Refund, 'status' | 'error'>>;

/** What changes after its creation, maybe away from the caller's requests (then with a callback): a payment or a refund. */
export type Changeable = Payment | Refund;
/** What may change on `T`: what its settlement may hold. */
type ChangesOf<T extends Changeable> = NonNullable<T['settlement']>['changes'];

/** A card saved with setup_future_usage. Only the processor's vault holds its number, as with a real processor. */
export interface SavedCard {
  apiKey: string;
  number: string;
  card: CardSummary;
}

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

/** What an Idempotency-Key stands for: the request it was first used with and what that request produced. */
export interface IdempotencyRecord {
  fingerprint: string;
  resource: Payment | Refund | WalletSession;
  httpStatus: number;
}

export class SandboxStore {
  private readonly payments = new Map<string, Payment>();
  /** By `<api key> <reference>`: the latest payment created with that reference. */
  private readonly paymentsByReference = new Map<string, Payment>();
  private readonly refunds = new Map<string, Refund>();
  /** By `<api key> <reference>`, as for payments. */
  private readonly refundsByReference = new Map<string, Refund>();
  /** By payment id, oldest first. */
  private readonly refundsByPayment = new Map<string, Refund[]>();
  /** By `<api key> <idempotency key>`; an API key has no space, so two pairs never share an entry (here and above). */
  private readonly idempotencyRecords = new Map<string, IdempotencyRecord>();
  /** By payment_method_token. */
  private readonly savedCards = new Map<string, SavedCard>();
  /** By session token, and by the payment token the customer's answer gave. */
  private readonly sessions = new Map<string, WalletSession>();
  private readonly sessionsByPaymentToken = new Map<string, WalletSession>();
  private readonly transferReferences = new Set<string>();
  /** By payment or refund id (their prefixes differ): the timers of settlements not yet applied. */
  private readonly settlementTimers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  /** `notify` hears of every change made with updateAndNotify, and of every settlement, once applied. */
  constructor(private readonly notify: (changed: Changeable) => void = () => {}) {}

  createPayment(fields: NewPayment): Payment {
    const now = Date.now();
    const payment: Payment = { ...fields, object: 'payment', id: `sbx_pay_${randomBase62(24)}`, createdMs: now, updatedMs: now };
    return this.keep(payment, this.payments, this.paymentsByReference);
  }

  /** The payment if `apiKey` created it; another key's payment looks the same as a missing one. */
  find(apiKey: string, id: string): Payment | undefined {
    return this.owned(apiKey, this.payments.get(id));
  }

  findByReference(apiKey: string, reference: string): Payment | undefined {
    return this.owned(apiKey, this.paymentsByReference.get(`${apiKey} ${reference}`));
  }

  createRefund(fields: NewRefund): Refund {
    const now = Date.now();
    const refund: Refund = { ...fields, object: 'refund', id: `sbx_re_${randomBase62(24)}`, createdMs: now, updatedMs: now };
    const ofPayment = this.refundsByPayment.get(refund.paymentId) ?? [];
    ofPayment.push(refund);
    this.refundsByPayment.set(refund.paymentId, ofPayment);
    return this.keep(refund, this.refunds, this.refundsByReference);
  }

  /** The refund if `apiKey` created it; another key's refund looks the same as a missing one. */
  findRefund(apiKey: string, id: string): Refund | undefined {
    return this.owned(apiKey, this.refunds.get(id));
  }

  /** The latest refund `apiKey` created with `reference`. */
  findRefundByReference(apiKey: string, reference: string): Refund | undefined {
    return this.owned(apiKey, this.refundsByReference.get(`${apiKey} ${reference}`));
  }

  /** `payment`'s refunds as they are now (those due settled first), oldest first. */
  refundsOf(payment: Payment): Refund[] {
    return (this.refundsByPayment.get(payment.id) ?? []).map((refund) => this.settled(refund));
  }

  /** Any key's payment: the customer's pages are opened by a browser, which has no key. */
  findForCustomer(id: string): Payment | undefined {
    const payment = this.payments.get(id);
    return payment && this.settled(payment);
  }

  /** Applies a state change; `updatedMs` always moves forward, even for two changes in one millisecond. */
  update<T extends Changeable>(resource: T, changes: ChangesOf<T>): T {
    Object.assign(resource, changes);
    resource.updatedMs = Math.max(Date.now(), resource.updatedMs + 1);
    return resource;
  }

  /**
   * Applies a change that happens away from the caller's requests (the customer on a page, the funds of a
   * transfer, a refund's review), which the processor tells the caller about with a callback; an API call's
   * own change is only in its answer (update).
   */
  updateAndNotify<T extends Changeable>(resource: T, changes: ChangesOf<T>): T {
    const before = resource.status;
    this.update(resource, changes);
    if (resource.status !== before) this.notify(resource);
    return resource;
  }

  /** The record, with its payment or refund as it is now (a replayed bank debit may have settled since). */
  idempotencyRecord(apiKey: string, key: string): IdempotencyRecord | undefined {
    const record = this.idempotencyRecords.get(`${apiKey} ${key}`);
    if (record !== undefined && record.resource.object !== 'session') this.settled(record.resource);
    return record;
  }

  saveIdempotencyRecord(apiKey: string, key: string, record: IdempotencyRecord): void {
    this.idempotencyRecords.set(`${apiKey} ${key}`, record);
  }

  /** Saves a card for `apiKey` and answers its new payment_method_token. */
  saveCard(savedCard: SavedCard): string {
    const token = `pm_${randomBase62(24)}`;
    this.savedCards.set(token, savedCard);
    return token;
  }

  /** The saved card if `apiKey` saved it; another key's token looks the same as an unknown one. */
  findSavedCard(apiKey: string, token: string): SavedCard | undefined {
    const savedCard = this.savedCards.get(token);
    return savedCard?.apiKey === apiKey ? savedCard : undefined;
  }

  createSession(fields: NewWalletSession): WalletSession {
    const session: WalletSession = { ...fields, object: 'session', id: `sess_${randomBase62(24)}`, token: `sst_${randomBase62(32)}`, answer: null };
    this.sessions.set(session.token, session);
    return session;
  }

  /** Any key's session: the customer's wallet knows only the session token. */
  findSession(token: string): WalletSession | undefined {
    return this.sessions.get(token);
  }

  /** Records the customer's answer and gives the payment token that carries it to the payment. */
  answerSession(session: WalletSession, decision: WalletDecision): string {
    const paymentToken = `wtok_${randomBase62(32)}`;
    session.answer = { decision, paymentToken, used: false };
    this.sessionsByPaymentToken.set(paymentToken, session);
    return paymentToken;
  }

  /** The session a payment token was given for, if `apiKey` created the session. */
  findSessionByPaymentToken(apiKey: string, paymentToken: string): WalletSession | undefined {
    const session = this.sessionsByPaymentToken.get(paymentToken);
    return session?.apiKey === apiKey ? session : undefined;
  }

  /** A short code the customer quotes with a transfer, so the sandbox can match the money to the payment. */
  newTransferReference(): string {
    let reference: string;
    do reference = `SBX-${randomBytes(4).toString('hex').toUpperCase()}`;
    while (this.transferReferences.has(reference));
    this.transferReferences.add(reference);
    return reference;
  }

  /** Stops the settlement timers, for a server that closes; a read still applies a settlement that is due. */
  close(): void {
    this.closed = true;
    for (const timer of this.settlementTimers.values()) clearTimeout(timer);
    this.settlementTimers.clear();
  }

  /** Stores a new payment or refund under its id and reference, and starts its settlement's timer. */
  private keep<T extends Changeable>(resource: T, byId: Map<string, T>, byReference: Map<string, T>): T {
    byId.set(resource.id, resource);
    if (resource.reference !== null) byReference.set(`${resource.apiKey} ${resource.reference}`, resource);
    this.scheduleSettlement(resource);
    return resource;
  }

  private owned<T extends Changeable>(apiKey: string, resource: T | undefined): T | undefined {
    return resource?.apiKey === apiKey ? this.settled(resource) : undefined;
  }

  private settled<T extends Changeable>(resource: T): T {
    const settlement: Settlement<ChangesOf<T>> | null = resource.settlement;
    if (settlement === null || Date.now() < settlement.dueMs) return resource;
    resource.settlement = null;
    clearTimeout(this.settlementTimers.get(resource.id));
    this.settlementTimers.delete(resource.id);
    return this.updateAndNotify(resource, settlement.changes);
  }

  /** Applies `resource`'s settlement when it is due, even if nobody reads it. */
  private scheduleSettlement(resource: Changeable): void {
    const { settlement } = resource;
    if (settlement === null || this.closed) return;
    const timer = setTimeout(() => {
      this.settlementTimers.delete(resource.id);
      // Not due yet by Date (a timer may fire a millisecond early, and tests freeze Date): wait again.
      if (this.settled(resource).settlement !== null) this.scheduleSettlement(resource);
    }, Math.max(0, settlement.dueMs - Date.now()));
    // Like the callbacks, a settlement never keeps the process alive.
    timer.unref();
    this.settlementTimers.set(resource.id, timer);
  }
}

/** JSON with object keys sorted, so two bodies that differ only in key order count as the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * A hash of the POST an Idempotency-Key was used with (only POSTs take keys); the hash, not the body, is kept
 * since the body holds the card or the bank account. The path is part of it, so a key reused on another route
 * is a mismatch.
 */
export function requestFingerprint(path: string, body: unknown): string {
  return createHash('sha256').update(`${path} ${canonicalJson(body)}`).digest('hex');
}
