// A dispute in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { snakeCaseStatus } from '../payments/machine/statuses.ts';
import { changeFields, ownerFields } from '../events/wire.ts';

/** What the dispute wire shape reads of a dispute (structurally the database row). */
export interface DisputeFields {
  id: string;
  paymentId: string;
  attemptId: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: string;
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
export function disputeWireObject(dispute: DisputeFields): Record<string, unknown> {
  return {
    dispute_id: dispute.id,
    payment_id: dispute.paymentId,
    attempt_id: dispute.attemptId,
    ...ownerFields(dispute),
    amount: dispute.amount,
    currency: dispute.currency,
    dispute_stage: 'dispute',
    dispute_status: `dispute_${snakeCaseStatus(dispute.status)}`,
    status: snakeCaseStatus(dispute.status),
    connector: dispute.connectorName,
    connector_dispute_id: dispute.connectorDisputeId,
    connector_reason: dispute.reason,
    challenge_required_by: dispute.evidenceDueBy?.toISOString() ?? null,
    evidence_submitted: dispute.evidence !== null && dispute.evidence !== undefined,
    ...changeFields(dispute),
  };
}
