// What the sandbox processors decide about a payment, shared by every payment method group's table of test
// values (cards.ts, banks.ts, wallets.ts).

/** A processor's reason for failing a payment, as the payment object's `error` carries it. */
export interface ProcessorError {
  code: string;
  message: string;
  /** Whether the same payment method may succeed if tried again (a processor fault, not a decline). */
  retryable: boolean;
}

export type Outcome = { kind: 'approved' } | { kind: 'failed'; error: ProcessorError };

export const APPROVED: Outcome = { kind: 'approved' };

export const failed = (code: string, message: string, retryable = false): Outcome & { kind: 'failed' } => ({
  kind: 'failed',
  error: { code, message, retryable },
});

/** A bank transfer's or crypto payment's funds did not arrive before the payment expired. */
export const TRANSFER_EXPIRED: ProcessorError = { code: 'transfer_expired', message: 'The funds did not arrive in time.', retryable: false };
