// A refund in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { snakeCaseStatus } from '../payments/machine/statuses.ts';
import { changeFields, ownerFields } from '../events/wire.ts';

/** What the refund wire shape reads of a refund (structurally the database row). */
export interface RefundFields {
  id: string;
  paymentId: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: string;
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
export function refundWireObject(refund: RefundFields): Record<string, unknown> {
  return {
    refund_id: refund.id,
    payment_id: refund.paymentId,
    ...ownerFields(refund),
    status: snakeCaseStatus(refund.status),
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
