// The sandbox's memory: payments by id, each visible only to the API key that created it, and each key's
// idempotency records. Nothing survives a restart, like a test-mode account that is reset.
import { createHash } from 'node:crypto';
import { randomBase62 } from '../domain/ids.ts';
import type { CardBrand, ProcessorError } from './cards.ts';

export type PaymentStatus =
  | 'requires_device_data'
  | 'requires_authentication'
  | 'requires_capture'
  | 'succeeded'
  | 'failed'
  | 'canceled';

export type CaptureMethod = 'automatic' | 'manual';

export interface Payment {
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
  /** What may be shown of the card; the number and CVC are never kept. */
  readonly card: { brand: CardBrand; last4: string; expMonth: number; expYear: number; holderName: string | null };
  readonly returnUrl: string;
  error: ProcessorError | null;
  readonly createdMs: number;
  updatedMs: number;
}

export type NewPayment = Omit<Payment, 'id' | 'createdMs' | 'updatedMs'>;
export type PaymentChanges = Partial<Pick<Payment, 'status' | 'amountCapturable' | 'amountCaptured' | 'error'>>;

/** What an Idempotency-Key stands for: the request it was first used with and what that request produced. */
export interface IdempotencyRecord {
  fingerprint: string;
  payment: Payment;
  httpStatus: number;
}

export class SandboxStore {
  private readonly payments = new Map<string, Payment>();
  /** By `<api key> <reference>`: the latest payment created with that reference. */
  private readonly paymentsByReference = new Map<string, Payment>();
  /** By `<api key> <idempotency key>`; an API key has no space, so two pairs never share an entry (here and above). */
  private readonly idempotencyRecords = new Map<string, IdempotencyRecord>();

  create(fields: NewPayment): Payment {
    const now = Date.now();
    const payment: Payment = { ...fields, id: `sbx_pay_${randomBase62(24)}`, createdMs: now, updatedMs: now };
    this.payments.set(payment.id, payment);
    if (payment.reference !== null) this.paymentsByReference.set(`${payment.apiKey} ${payment.reference}`, payment);
    return payment;
  }

  /** The payment if `apiKey` created it; another key's payment looks the same as a missing one. */
  find(apiKey: string, id: string): Payment | undefined {
    const payment = this.payments.get(id);
    return payment?.apiKey === apiKey ? payment : undefined;
  }

  findByReference(apiKey: string, reference: string): Payment | undefined {
    return this.paymentsByReference.get(`${apiKey} ${reference}`);
  }

  /** Any key's payment: the challenge pages are opened by the customer's browser, which has no key. */
  findForChallenge(id: string): Payment | undefined {
    return this.payments.get(id);
  }

  /** Applies a state change; `updatedMs` always moves forward, even for two changes in one millisecond. */
  update(payment: Payment, changes: PaymentChanges): Payment {
    Object.assign(payment, changes);
    payment.updatedMs = Math.max(Date.now(), payment.updatedMs + 1);
    return payment;
  }

  idempotencyRecord(apiKey: string, key: string): IdempotencyRecord | undefined {
    return this.idempotencyRecords.get(`${apiKey} ${key}`);
  }

  saveIdempotencyRecord(apiKey: string, key: string, record: IdempotencyRecord): void {
    this.idempotencyRecords.set(`${apiKey} ${key}`, record);
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
 * since the body holds the card. The path is part of it, so a key reused on another route is a mismatch.
 */
export function requestFingerprint(path: string, body: unknown): string {
  return createHash('sha256').update(`${path} ${canonicalJson(body)}`).digest('hex');
}
