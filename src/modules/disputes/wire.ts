// A dispute in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { z } from 'zod';
import { DISPUTE_STATUSES, type DisputeStatus } from './machine.ts';
import { changeFields, changeFieldsSchema, ownerFields, ownerFieldsSchema, wireEnum, wireEnumValues, wireInstant } from '../events/wire.ts';

export const disputeWebhookObjectSchema = z
  .strictObject({
    dispute_id: z.string(),
    payment_id: z.string().describe('The payment disputed.'),
    attempt_id: z.string().describe('The payment attempt disputed.'),
    ...ownerFieldsSchema,
    amount: z.number().int().describe('The amount disputed, in minor units of `currency`.'),
    currency: z.string().describe('ISO 4217 code.'),
    dispute_stage: z.literal('dispute').describe('The chargeback stage.'),
    dispute_status: z.enum(wireEnumValues(DISPUTE_STATUSES, 'dispute_')).describe("`status` with the event-style prefix (Hyperswitch's DisputeResponse)."),
    status: z.enum(wireEnumValues(DISPUTE_STATUSES)),
    connector: z.string(),
    connector_dispute_id: z.string().describe("The processor's id of the dispute."),
    connector_reason: z.string().nullable().describe("The processor's reason code or text."),
    challenge_required_by: wireInstant().nullable().describe('The deadline for evidence, when the processor gives one.'),
    evidence_submitted: z.boolean(),
    ...changeFieldsSchema,
  })
  .meta({ title: 'DisputeWebhookObject', description: 'A dispute: `content.object` when `content.type` is `dispute_details`.' });
export type DisputeWebhookObject = z.infer<typeof disputeWebhookObjectSchema>;

/** What the dispute wire shape reads of a dispute (structurally the database row). */
export interface DisputeFields {
  id: string;
  paymentId: string;
  attemptId: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: DisputeStatus;
  amount: number;
  currency: string;
  reason: string | null;
  connectorName: string;
  connectorDisputeId: string;
  evidenceDueBy: Date | null;
  evidence: unknown;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A dispute in `content.object` (Hyperswitch's DisputeResponse is the model: `dispute_status` carries the
 * event-style name, `dispute_stage` the chargeback stage), with `updated` and `version` as for payments.
 */
export function disputeWireObject(dispute: DisputeFields): DisputeWebhookObject {
  return {
    dispute_id: dispute.id,
    payment_id: dispute.paymentId,
    attempt_id: dispute.attemptId,
    ...ownerFields(dispute),
    amount: dispute.amount,
    currency: dispute.currency,
    dispute_stage: 'dispute',
    dispute_status: `dispute_${wireEnum(dispute.status)}` as const,
    status: wireEnum(dispute.status),
    connector: dispute.connectorName,
    connector_dispute_id: dispute.connectorDisputeId,
    connector_reason: dispute.reason,
    challenge_required_by: dispute.evidenceDueBy?.toISOString() ?? null,
    evidence_submitted: dispute.evidence !== null && dispute.evidence !== undefined,
    ...changeFields(dispute),
  };
}
