// A sandbox processor's memory: payments, refunds, disputes, saved cards and payouts by id, each visible only
// to the API key that created it (a dispute: its payment's key), each key's wallet sessions and idempotency
// records. Nothing survives a restart, like a test-mode account that is reset. Each processor personality has
// a store of its own. Its only background work is applying a change decided earlier when it falls due (a bank
// debit's or a refund's settlement, the opening of the dispute test card's dispute, a payout's progress).
import { createHash, randomBytes } from 'node:crypto';
import { randomBase62 } from './ids.ts';
import type {
  Changeable,
  ChangesOf,
  Dispute,
  NewDispute,
  NewPayment,
  NewPayout,
  NewRefund,
  NewSavedCard,
  NewWalletSession,
  Payment,
  Payout,
  Refund,
  Resource,
  SavedCard,
  Settlement,
  WalletSession,
} from './resources.ts';
import type { WalletDecision } from './wallets.ts';

/** What an Idempotency-Key stands for: the request it was first used with and what that request produced. */
export interface IdempotencyRecord {
  fingerprint: string;
  resource: Resource;
  httpStatus: number;
}

/** A change of one resource, decided earlier, that whenDue applies once it is due. */
interface DueChange {
  readonly dueMs: number;
  readonly apply: () => void;
  timer: NodeJS.Timeout | null;
}

/** Who hears of what happens in a store. */
export interface StoreListeners {
  /** Every change made with updateAndNotify (a settlement's too) and every dispute opened, once applied: the callbacks. */
  notify(changed: Changeable): void;
  /**
   * Every payment that succeeds, whichever way (at creation, captured, settled, funded, on the customer's
   * page), once: the moment the dispute test card's dispute is counted from.
   */
  paymentSucceeded(payment: Payment): void;
}

const NO_LISTENERS: StoreListeners = { notify: () => {}, paymentSucceeded: () => {} };

export class SandboxStore {
  private readonly payments = new Map<string, Payment>();
  /** By `<api key> <reference>`: the latest payment created with that reference. */
  private readonly paymentsByReference = new Map<string, Payment>();
  private readonly refunds = new Map<string, Refund>();
  /** By `<api key> <reference>`, as for payments. */
  private readonly refundsByReference = new Map<string, Refund>();
  /** By payment id, oldest first (here and below). */
  private readonly refundsByPayment = new Map<string, Refund[]>();
  private readonly disputes = new Map<string, Dispute>();
  private readonly disputesByPayment = new Map<string, Dispute[]>();
  /** By `<api key> <idempotency key>`; an API key has no space, so two pairs never share an entry (here and above). */
  private readonly idempotencyRecords = new Map<string, IdempotencyRecord>();
  /** By payment_method_token. */
  private readonly savedCards = new Map<string, SavedCard>();
  private readonly payouts = new Map<string, Payout>();
  /** By `<api key> <reference>`, as for payments. */
  private readonly payoutsByReference = new Map<string, Payout>();
  /** By session token, and by the payment token the customer's answer gave. */
  private readonly sessions = new Map<string, WalletSession>();
  private readonly sessionsByPaymentToken = new Map<string, WalletSession>();
  private readonly transferReferences = new Set<string>();
  /** By the id of the resource they change (the prefixes of payment, refund, dispute and payout ids and of tokens differ), in no order. */
  private readonly dueChanges = new Map<string, DueChange[]>();
  private closed = false;

  constructor(private readonly listeners: StoreListeners = NO_LISTENERS) {}

  createPayment(fields: NewPayment): Payment {
    const now = Date.now();
    const payment: Payment = { ...fields, object: 'payment', id: `sbx_pay_${randomBase62(24)}`, createdMs: now, updatedMs: now };
    this.settleWhenDue(this.keep(payment, this.payments, this.paymentsByReference), payment.settlement);
    if (payment.status === 'succeeded') this.listeners.paymentSucceeded(payment);
    return payment;
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
    appendTo(this.refundsByPayment, refund.paymentId, refund);
    return this.settleWhenDue(this.keep(refund, this.refunds, this.refundsByReference), refund.settlement);
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

  /**
   * Stores a dispute the customer's bank opened, and tells its key with a callback: the caller never opens
   * one (the test helper that does stands for the bank).
   */
  openDispute(fields: NewDispute): Dispute {
    const now = Date.now();
    const dispute: Dispute = { ...fields, object: 'dispute', id: `sbx_dp_${randomBase62(24)}`, createdMs: now, updatedMs: now };
    appendTo(this.disputesByPayment, dispute.paymentId, dispute);
    this.disputes.set(dispute.id, dispute);
    this.listeners.notify(dispute);
    return dispute;
  }

  /** The dispute if `apiKey` created its payment; another key's dispute looks the same as a missing one. */
  findDispute(apiKey: string, id: string): Dispute | undefined {
    return this.owned(apiKey, this.disputes.get(id));
  }

  /** `payment`'s disputes, oldest first. */
  disputesOf(payment: Payment): Dispute[] {
    return [...(this.disputesByPayment.get(payment.id) ?? [])];
  }

  /** Any key's payment: the customer's pages are opened by a browser, which has no key. */
  findForCustomer(id: string): Payment | undefined {
    const payment = this.payments.get(id);
    return payment && this.settled(payment);
  }

  /** Applies a state change; `updatedMs` always moves forward, even for two changes in one millisecond. */
  update<T extends Changeable>(resource: T, changes: ChangesOf<T>): T {
    const before = resource.status;
    Object.assign(resource, changes);
    resource.updatedMs = Math.max(Date.now(), resource.updatedMs + 1);
    if (resource.object === 'payment' && resource.status === 'succeeded' && before !== 'succeeded') this.listeners.paymentSucceeded(resource);
    return resource;
  }

  /**
   * Applies a change that happens away from the caller's requests (the customer on a page, the funds of a
   * transfer, a refund's review, a saved card revoked at the bank, a payout's progress), which the processor
   * tells the caller about with a callback; an API call's own change is only in its answer (update).
   */
  updateAndNotify<T extends Changeable>(resource: T, changes: ChangesOf<T>): T {
    const before = resource.status;
    this.update(resource, changes);
    if (resource.status !== before) this.listeners.notify(resource);
    return resource;
  }

  /**
   * Applies `apply` (a change of `resource`, or of what belongs to it) once it is due, by whichever comes
   * first: a timer at `dueMs` (so its callback goes out with no read at all) or the first read of `resource`
   * after `dueMs` (so a test that moves the clock sees it without waiting for the timer).
   */
  whenDue(resource: Changeable, dueMs: number, apply: () => void): void {
    const change: DueChange = { dueMs, apply, timer: null };
    appendTo(this.dueChanges, resource.id, change);
    this.startTimer(resource, change);
  }

  /** The record, with its resource as it is now (a replayed bank debit may have settled since). */
  idempotencyRecord(apiKey: string, key: string): IdempotencyRecord | undefined {
    const record = this.idempotencyRecords.get(`${apiKey} ${key}`);
    if (record !== undefined && record.resource.object !== 'session') this.settled(record.resource);
    return record;
  }

  saveIdempotencyRecord(apiKey: string, key: string, record: IdempotencyRecord): void {
    this.idempotencyRecords.set(`${apiKey} ${key}`, record);
  }

  /** Saves a card for its key, active, under a new payment_method_token (its id). */
  saveCard(fields: NewSavedCard): SavedCard {
    const now = Date.now();
    const savedCard: SavedCard = { ...fields, object: 'payment_method', id: `pm_${randomBase62(24)}`, status: 'active', createdMs: now, updatedMs: now };
    this.savedCards.set(savedCard.id, savedCard);
    return savedCard;
  }

  /** The saved card if `apiKey` saved it; another key's token looks the same as an unknown one. */
  findSavedCard(apiKey: string, token: string): SavedCard | undefined {
    return this.owned(apiKey, this.savedCards.get(token));
  }

  /** Stores a new payout under its id and reference; its progress is scheduled by the caller (payouts.ts) with whenDue. */
  createPayout(fields: NewPayout): Payout {
    const now = Date.now();
    const payout: Payout = { ...fields, object: 'payout', id: `sbx_po_${randomBase62(24)}`, createdMs: now, updatedMs: now };
    return this.keep(payout, this.payouts, this.payoutsByReference);
  }

  /** The payout if `apiKey` created it; another key's payout looks the same as a missing one. */
  findPayout(apiKey: string, id: string): Payout | undefined {
    return this.owned(apiKey, this.payouts.get(id));
  }

  /** The latest payout `apiKey` created with `reference`. */
  findPayoutByReference(apiKey: string, reference: string): Payout | undefined {
    return this.owned(apiKey, this.payoutsByReference.get(`${apiKey} ${reference}`));
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

  /** Stops the timers of the changes not yet due, for a server that closes; a read still applies a change that is due. */
  close(): void {
    this.closed = true;
    for (const changes of this.dueChanges.values()) for (const change of changes) clearTimeout(change.timer ?? undefined);
  }

  /** Stores a new payment, refund or payout under its id and its reference. */
  private keep<T extends Payment | Refund | Payout>(resource: T, byId: Map<string, T>, byReference: Map<string, T>): T {
    byId.set(resource.id, resource);
    if (resource.reference !== null) byReference.set(`${resource.apiKey} ${resource.reference}`, resource);
    return resource;
  }

  /**
   * Applies a new payment's or refund's settlement once it is due. The settlement is the resource's own,
   * passed by the caller that knows its type (so its changes are known to fit the resource).
   */
  private settleWhenDue<T extends Payment | Refund>(resource: T, settlement: Settlement<ChangesOf<T>> | null): T {
    if (settlement !== null) {
      this.whenDue(resource, settlement.dueMs, () => {
        resource.settlement = null;
        this.updateAndNotify(resource, settlement.changes);
      });
    }
    return resource;
  }

  private owned<T extends Changeable>(apiKey: string, resource: T | undefined): T | undefined {
    return resource?.apiKey === apiKey ? this.settled(resource) : undefined;
  }

  /** `resource` after its due changes were applied, in the order they fell due (one may lead to another). */
  private settled<T extends Changeable>(resource: T): T {
    for (;;) {
      const changes = this.dueChanges.get(resource.id) ?? [];
      const now = Date.now();
      const next = changes.filter((change) => change.dueMs <= now).sort((a, b) => a.dueMs - b.dueMs)[0];
      if (next === undefined) return resource;
      // Taken out before it applies, so a read or a timer during the change cannot apply it a second time.
      const rest = changes.filter((change) => change !== next);
      if (rest.length === 0) this.dueChanges.delete(resource.id);
      else this.dueChanges.set(resource.id, rest);
      clearTimeout(next.timer ?? undefined);
      next.apply();
    }
  }

  /** Applies `change` when it is due, even if nobody reads `resource`. */
  private startTimer(resource: Changeable, change: DueChange): void {
    if (this.closed) return;
    change.timer = setTimeout(
      () => {
        change.timer = null;
        this.settled(resource);
        // Not due yet by Date (a timer may fire a millisecond early, and tests freeze Date): wait again.
        if (this.dueChanges.get(resource.id)?.includes(change)) this.startTimer(resource, change);
      },
      Math.max(0, change.dueMs - Date.now()),
    );
    // Like the callbacks, a due change never keeps the process alive.
    change.timer.unref();
  }
}

/** Adds `value` to the list of `key` in `map`, the list's last. */
function appendTo<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
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
  return createHash('sha256')
    .update(`${path} ${canonicalJson(body)}`)
    .digest('hex');
}
