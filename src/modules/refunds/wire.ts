// A refund in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { z } from 'zod';
import { REFUND_STATUSES, type RefundStatus } from './machine.ts';
import { changeFields, changeFieldsSchema, ownerFields, ownerFieldsSchema, wireEnum, wireEnumValues } from '../events/wire.ts';

export const refundWebhookObjectSchema = z
  .strictObject({
    refund_id: z.string(),
    payment_id: z.string().describe('The payment refunded.'),
    ...ownerFieldsSchema,
    status: z.enum(wireEnumValues(REFUND_STATUSES)),
    amount: z.number().int().describe('In minor units of `currency`.'),
    currency: z.string().describe('ISO 4217 code.'),
    reason: z.string().nullable(),
    attempt_id: z.string().describe('The payment attempt whose capture is refunded.'),
    connector: z.string(),
    connector_refund_id: z.string().nullable().describe("The processor's id of the refund."),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    ...changeFieldsSchema,
  })
  .meta({ title: 'RefundWebhookObject', description: 'A refund: `content.object` when `content.type` is `refund_details`.' });
export type RefundWebhookObject = z.infer<typeof refundWebhookObjectSchema>;

/** What the refund wire shape reads of a refund (structurally the database row). */
export interface RefundFields {
  id: string;
  paymentId: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: RefundStatus;
  amount: number;
  currency: string;
  reason: string | null;
  attemptId: string;
  connectorName: string;
  connectorRefundId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A refund in `content.object` (Hyperswitch's RefundResponse is the model), with `updated` and `version` as for payments. */
export function refundWireObject(refund: RefundFields): RefundWebhookObject {
  return {
    refund_id: refund.id,
    payment_id: refund.paymentId,
    ...ownerFields(refund),
    status: wireEnum(refund.status),
    amount: refund.amount,
    currency: refund.currency,
    reason: refund.reason,
    attempt_id: refund.attemptId,
    connector: refund.connectorName,
    connector_refund_id: refund.connectorRefundId,
    error_code: refund.errorCode,
    error_message: refund.errorMessage,
    ...changeFields(refund),
  };
}
