// A payment in its webhook wire shape (`content.object`), as events/wire.ts sets out: the intent with its active attempt.
import { z } from 'zod';
import { ATTEMPT_STATUSES, INTENT_STATUSES, type AttemptStatus, type AuthenticationType, type CaptureMethod, type IntentStatus } from './machine/statuses.ts';
import { changeFields, changeFieldsSchema, ownerFields, ownerFieldsSchema, wireCardSchema, wireEnum, wireEnumValues } from '../events/wire.ts';

export const paymentWebhookObjectSchema = z
  .strictObject({
    payment_id: z.string(),
    ...ownerFieldsSchema,
    status: z.enum(wireEnumValues(INTENT_STATUSES)).describe("The payment's status, derived from its active attempt's."),
    amount: z.number().int().describe('The amount asked for, in minor units of `currency`.'),
    currency: z.string().describe('ISO 4217 code.'),
    amount_capturable: z.number().int().describe('What may still be captured, in minor units.'),
    amount_received: z.number().int().describe('What was captured, in minor units.'),
    amount_refunded: z.number().int().describe('What was refunded, in minor units.'),
    surcharge_amount: z.number().int().describe('The surcharge added to `amount`, in minor units (docs/surcharges.md).'),
    capture_method: z.enum(wireEnumValues(['AUTOMATIC', 'MANUAL'] as const satisfies readonly CaptureMethod[])),
    authentication_type: z.enum(wireEnumValues(['THREE_DS', 'NO_THREE_DS'] as const satisfies readonly AuthenticationType[])),
    customer_id: z.string().nullable(),
    description: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable().describe("The merchant's key-value pairs from creation (string values, docs/api.md), or null."),
    return_url: z.string().nullable(),
    connector: z.string().nullable().describe('The connector of the active attempt.'),
    connector_transaction_id: z.string().nullable().describe("The processor's id of the active attempt's transaction."),
    attempt_count: z.number().int(),
    active_attempt: z
      .strictObject({
        attempt_id: z.string(),
        attempt_number: z.number().int(),
        status: z.enum(wireEnumValues(ATTEMPT_STATUSES)),
        payment_method_type: z.string().nullable(),
        card: wireCardSchema.nullable(),
        payment_method_details: z
          .record(z.string(), z.unknown())
          .nullable()
          .describe('What is kept of a non-card payment method (a bank account holder and IBAN last 4, a wallet provider), or null.'),
        error_code: z.string().nullable(),
        error_message: z.string().nullable(),
      })
      .describe('The attempt whose status the payment shows.'),
    cancellation_reason: z.string().nullable(),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    ...changeFieldsSchema,
  })
  .meta({ title: 'PaymentWebhookObject', description: 'A payment with its active attempt: `content.object` when `content.type` is `payment_details`.' });
export type PaymentWebhookObject = z.infer<typeof paymentWebhookObjectSchema>;

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
  captureMethod: CaptureMethod;
  authenticationType: AuthenticationType;
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

export function paymentWireObject(intent: PaymentIntentFields, attempt: PaymentAttemptFields): PaymentWebhookObject {
  return {
    payment_id: intent.id,
    ...ownerFields(intent),
    status: wireEnum(intent.status),
    amount: intent.amount,
    currency: intent.currency,
    amount_capturable: intent.amountCapturable,
    amount_received: intent.amountReceived,
    amount_refunded: intent.amountRefunded,
    surcharge_amount: intent.surchargeAmount,
    capture_method: wireEnum(intent.captureMethod),
    authentication_type: wireEnum(intent.authenticationType),
    customer_id: intent.customerId,
    description: intent.description,
    // Both JSON columns hold objects only: the API admits metadata only as one (kernel/metadata.ts), and
    // kept-fields.ts writes the payment method's details as one.
    metadata: (intent.metadata ?? null) as PaymentWebhookObject['metadata'],
    return_url: intent.returnUrl,
    connector: attempt.connectorName,
    connector_transaction_id: attempt.connectorTransactionId,
    attempt_count: intent.attemptCount,
    active_attempt: {
      attempt_id: attempt.id,
      attempt_number: attempt.attemptNumber,
      status: wireEnum(attempt.status),
      payment_method_type: attempt.paymentMethodType,
      card:
        attempt.cardLast4 === null
          ? null
          : { brand: attempt.cardBrand?.toLowerCase() ?? null, last4: attempt.cardLast4, exp_month: attempt.cardExpiryMonth, exp_year: attempt.cardExpiryYear },
      payment_method_details: (attempt.paymentMethodDetails ?? null) as PaymentWebhookObject['active_attempt']['payment_method_details'],
      error_code: attempt.errorCode,
      error_message: attempt.errorMessage,
    },
    cancellation_reason: intent.cancellationReason,
    error_code: intent.errorCode,
    error_message: intent.errorMessage,
    ...changeFields(intent),
  };
}
