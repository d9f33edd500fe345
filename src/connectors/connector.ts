// The connector interface: what the payments service needs from any processor. Each implementation knows
// its processor's wire format and nothing of GraphQL or the database.
import type { ProcessorPaymentStatus } from '../domain/payments/attempt-machine.ts';
import type { CaptureMethod } from '../domain/payments/statuses.ts';

export interface CardDetails {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  cvc: string;
  holderName?: string | null;
}

export interface AuthorizeRequest {
  /** Our attempt id: the processor's reference and the idempotency key of the call. */
  reference: string;
  amount: number;
  currency: string;
  captureMethod: CaptureMethod;
  threeDs: boolean;
  card: CardDetails;
  /** Where the processor sends the customer back after a redirect (our redirect-response route). */
  returnUrl: string;
}

/** A processor's view of a payment, normalised. */
export interface ProcessorPayment {
  transactionId: string;
  status: ProcessorPaymentStatus;
  amountCapturable: number;
  amountCaptured: number;
  redirectUrl: string | null;
  error: { code: string; message: string; retryable: boolean } | null;
}

/**
 * A call that did not produce a processor answer. `outcomeUnknown` says whether the processor may have
 * acted (timeout, 5xx): then the payment stays pending and is synced, never failed by guess.
 */
export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'unreachable' | 'server_error' | 'bad_response' | 'rejected',
    readonly outcomeUnknown: boolean,
    readonly processorCode?: string,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

export interface Connector {
  readonly name: string;
  authorize(request: AuthorizeRequest): Promise<ProcessorPayment>;
  capture(transactionId: string, amount: number, idempotencyKey: string): Promise<ProcessorPayment>;
  void(transactionId: string, idempotencyKey: string): Promise<ProcessorPayment>;
  sync(transactionId: string): Promise<ProcessorPayment>;
  /** The payment created for `reference`, when a call's answer was lost (timeout); null if none was created. */
  findByReference(reference: string): Promise<ProcessorPayment | null>;
}
