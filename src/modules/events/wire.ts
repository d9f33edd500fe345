// Resources in their webhook wire shape (`content.object`): snake_case, statuses as snake_case strings,
// amounts in minor units, instants in ISO 8601. A payment carries `updated` so receivers apply only a newer
// state (the seed's receiver obligations), and `version`, which orders changes of the same instant.
import { snakeCaseStatus, type AttemptStatus, type IntentStatus } from '../payments/machine/statuses.ts';

/** When a resource was created and last changed, and the version that orders its changes: every wire shape ends with them. */
function changeFields(resource: { createdAt: Date; updatedAt: Date; version: number }) {
  return { created: resource.createdAt.toISOString(), updated: resource.updatedAt.toISOString(), version: resource.version };
}

/** Who a resource belongs to, as every wire shape carries it. */
function ownerFields(resource: { merchantId: string; profileId: string; mode: string }) {
  return { merchant_id: resource.merchantId, profile_id: resource.profileId, livemode: resource.mode === 'LIVE' };
}

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

/** What the mandate wire shape reads of a mandate and its saved card (structurally the database rows). */
export interface MandateFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  customerId: string;
  paymentId: string;
  status: string;
  revokedAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  savedPaymentMethod: {
    id: string;
    connectorAccountId: string;
    cardBrand: string | null;
    cardLast4: string | null;
    cardExpiryMonth: number | null;
    cardExpiryYear: number | null;
  };
}

/** A mandate in `content.object` (Hyperswitch's MandateResponse is the model): never the processor's token. */
export function mandateWireObject(mandate: MandateFields): Record<string, unknown> {
  const card = mandate.savedPaymentMethod;
  return {
    mandate_id: mandate.id,
    ...ownerFields(mandate),
    status: snakeCaseStatus(mandate.status),
    customer_id: mandate.customerId,
    payment_id: mandate.paymentId,
    payment_method_id: card.id,
    payment_method: 'card',
    card: { brand: card.cardBrand?.toLowerCase() ?? null, last4: card.cardLast4, exp_month: card.cardExpiryMonth, exp_year: card.cardExpiryYear },
    connector_account_id: card.connectorAccountId,
    revoked_at: mandate.revokedAt?.toISOString() ?? null,
    ...changeFields(mandate),
  };
}

/** What the payout wire shape reads of a payout (structurally the database row). */
export interface PayoutFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: string;
  amount: number;
  currency: string;
  country: string | null;
  description: string | null;
  destinationType: string;
  destinationLast4: string;
  connectorName: string | null;
  connectorPayoutId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A payout in `content.object` (Hyperswitch's PayoutCreateResponse is the model): never the card number or IBAN. */
export function payoutWireObject(payout: PayoutFields): Record<string, unknown> {
  return {
    payout_id: payout.id,
    ...ownerFields(payout),
    status: snakeCaseStatus(payout.status),
    amount: payout.amount,
    currency: payout.currency,
    payout_type: payout.destinationType === 'card' ? 'card' : 'bank',
    destination: { type: payout.destinationType, last4: payout.destinationLast4 },
    country: payout.country,
    description: payout.description,
    connector: payout.connectorName,
    connector_payout_id: payout.connectorPayoutId,
    error_code: payout.errorCode,
    error_message: payout.errorMessage,
    ...changeFields(payout),
  };
}

/** What the subscription wire shape reads of a subscription (structurally the database row). */
export interface SubscriptionFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  customerId: string;
  mandateId: string;
  status: string;
  amount: number;
  currency: string;
  intervalUnit: string;
  intervalCount: number;
  paidPeriods: number;
  nextChargeAt: Date;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The period an invoice_paid event reports. */
export interface PaidInvoice {
  period: number;
  paymentId: string;
  amount: number;
  currency: string;
  periodStart: Date;
  paidAt: Date;
}

/** A subscription in `content.object` (subscription_details), with the invoice just paid. */
export function subscriptionWireObject(subscription: SubscriptionFields, invoice: PaidInvoice): Record<string, unknown> {
  return {
    subscription_id: subscription.id,
    ...ownerFields(subscription),
    status: snakeCaseStatus(subscription.status),
    customer_id: subscription.customerId,
    mandate_id: subscription.mandateId,
    amount: subscription.amount,
    currency: subscription.currency,
    interval: subscription.intervalUnit.toLowerCase(),
    interval_count: subscription.intervalCount,
    paid_periods: subscription.paidPeriods,
    next_charge_at: subscription.nextChargeAt.toISOString(),
    invoice: {
      period: invoice.period,
      payment_id: invoice.paymentId,
      amount_paid: invoice.amount,
      currency: invoice.currency,
      period_start: invoice.periodStart.toISOString(),
      paid_at: invoice.paidAt.toISOString(),
    },
    ...changeFields(subscription),
  };
}
