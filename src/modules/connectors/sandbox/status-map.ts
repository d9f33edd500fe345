// The sandbox's answers as the port's objects: its statuses mapped to ours by table (one entry per status it
// sends, so a status it adds fails to compile here), its fields renamed. Its decline codes pass through as
// they are, read through the decline catalog (decline-map.ts).
import type { ProcessorPaymentStatus } from '../../payments/machine/attempt.ts';
import type { ProcessorDispute, ProcessorNextAction, ProcessorPayment, ProcessorPayout, ProcessorRefund } from '../port.ts';
import { AUTHENTICATION_FAILED, paymentErrorOf } from './decline-map.ts';
import type { SandboxDispute, SandboxPayment, SandboxPayout, SandboxRefund } from './wire.ts';

/** A payment's status, some refined by its amounts, its error or how it was canceled. */
const PAYMENT_STATUSES = {
  requires_device_data: () => 'requires_device_data',
  requires_authentication: () => 'requires_authentication',
  requires_customer_action: () => 'requires_authentication',
  processing: () => 'processing',
  requires_capture: (payment) => (payment.amount_capturable < payment.amount ? 'partially_authorized' : 'authorized'),
  succeeded: (payment) => (payment.amount_captured < payment.amount ? 'partially_captured' : 'captured'),
  failed: (payment) => (payment.error?.code === AUTHENTICATION_FAILED ? 'authentication_failed' : 'failed'),
  canceled: (payment) => (payment.canceled_after_capture ? 'voided_post_capture' : 'voided'),
} as const satisfies Record<SandboxPayment['status'], (payment: SandboxPayment) => ProcessorPaymentStatus>;

const REFUND_STATUSES = {
  pending: 'pending',
  succeeded: 'succeeded',
  failed: 'failed',
  requires_review: 'review',
} as const satisfies Record<SandboxRefund['status'], ProcessorRefund['status']>;

const PAYOUT_STATUSES = {
  pending: 'initiated',
  in_transit: 'processing',
  paid: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
  returned: 'reversed',
} as const satisfies Record<SandboxPayout['status'], ProcessorPayout['status']>;

const DISPUTE_STATUSES = {
  needs_response: 'opened',
  accepted: 'accepted',
  under_review: 'challenged',
  won: 'won',
  lost: 'lost',
  expired: 'expired',
  cancelled: 'cancelled',
} as const satisfies Record<SandboxDispute['status'], ProcessorDispute['status']>;

function nextActionOf(payment: SandboxPayment): ProcessorNextAction | null {
  const action = payment.next_action;
  if (action === null) return null;
  return action.type === 'redirect'
    ? { type: 'redirect', url: action.redirect_url }
    : { type: 'display_instructions', url: action.redirect_url, instructions: action.instructions };
}

export function toProcessorPayment(payment: SandboxPayment): ProcessorPayment {
  return {
    transactionId: payment.id,
    status: PAYMENT_STATUSES[payment.status](payment),
    amountCapturable: payment.amount_capturable,
    amountCaptured: payment.amount_captured,
    nextAction: nextActionOf(payment),
    paymentMethodToken: payment.payment_method_token ?? null,
    error: payment.error === null ? null : paymentErrorOf(payment.error),
  };
}

export function toProcessorRefund(refund: SandboxRefund): ProcessorRefund {
  return { refundId: refund.id, status: REFUND_STATUSES[refund.status], amount: refund.amount, error: refund.error };
}

export function toProcessorPayout(payout: SandboxPayout): ProcessorPayout {
  return { payoutId: payout.id, status: PAYOUT_STATUSES[payout.status], error: payout.error };
}

export function toProcessorDispute(dispute: SandboxDispute): ProcessorDispute {
  return {
    disputeId: dispute.id,
    transactionId: dispute.payment,
    status: DISPUTE_STATUSES[dispute.status],
    amount: dispute.amount,
    currency: dispute.currency.toUpperCase(),
    reason: dispute.reason,
    evidenceDueBy: dispute.evidence_due_by === null ? null : new Date(dispute.evidence_due_by * 1000),
  };
}
