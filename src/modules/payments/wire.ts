// A payment in its webhook wire shape (`content.object`), as events/wire.ts sets out: the intent with its active attempt.
import { snakeCaseStatus, type AttemptStatus, type IntentStatus } from './machine/statuses.ts';
import { changeFields, ownerFields } from '../events/wire.ts';

/** What the payment wire shape reads of an intent (structurally the database row). */
export interface PaymentIntentFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: IntentStatus;
  amount: number;
  currency: string;
  amountCapturable: number;
  amountReceived: number;
  amountRefunded: number;
  surchargeAmount: number;
  captureMethod: string;
  authenticationType: string;
  customerId: string | null;
  description: string | null;
  metadata: unknown;
  returnUrl: string | null;
  attemptCount: number;
  cancellationReason: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** What it reads of the active attempt. */
export interface PaymentAttemptFields {
  id: string;
  attemptNumber: number;
  status: AttemptStatus;
  connectorName: string | null;
  connectorTransactionId: string | null;
  paymentMethodType: string | null;
  cardBrand: string | null;
  cardLast4: string | null;
  cardExpiryMonth: number | null;
  cardExpiryYear: number | null;
  paymentMethodDetails: unknown;
  errorCode: string | null;
  errorMessage: string | null;
}

export function paymentWireObject(intent: PaymentIntentFields, attempt: PaymentAttemptFields): Record<string, unknown> {
  return {
    payment_id: intent.id,
    ...ownerFields(intent),
    status: snakeCaseStatus(intent.status),
    amount: intent.amount,
    currency: intent.currency,
    amount_capturable: intent.amountCapturable,
    amount_received: intent.amountReceived,
    amount_refunded: intent.amountRefunded,
    surcharge_amount: intent.surchargeAmount,
    capture_method: intent.captureMethod.toLowerCase(),
    authentication_type: intent.authenticationType.toLowerCase(),
    customer_id: intent.customerId,
    description: intent.description,
    metadata: intent.metadata ?? null,
    return_url: intent.returnUrl,
    connector: attempt.connectorName,
    connector_transaction_id: attempt.connectorTransactionId,
    attempt_count: intent.attemptCount,
    active_attempt: {
      attempt_id: attempt.id,
      attempt_number: attempt.attemptNumber,
      status: snakeCaseStatus(attempt.status),
      payment_method_type: attempt.paymentMethodType,
      card:
        attempt.cardLast4 === null
          ? null
          : { brand: attempt.cardBrand?.toLowerCase() ?? null, last4: attempt.cardLast4, exp_month: attempt.cardExpiryMonth, exp_year: attempt.cardExpiryYear },
      payment_method_details: attempt.paymentMethodDetails ?? null,
      error_code: attempt.errorCode,
      error_message: attempt.errorMessage,
    },
    cancellation_reason: intent.cancellationReason,
    error_code: intent.errorCode,
    error_message: intent.errorMessage,
    ...changeFields(intent),
  };
}
