// The sandbox API's wire shapes: each resource as `GET <apiPrefix>/<collection>/<id>` answers it, and as a
// callback carries it. Card numbers, IBANs, endpoint secrets and wallet payment tokens are never part of them.
import type { Delivery, Endpoint } from './callbacks.ts';
import { nextAction } from './customer.ts';
import { evidenceDueByMs, type DisputeList } from './disputes.ts';
import type { CardSummary, Dispute, Payment, Payout, Refund, Resource, SavedCard, WalletSession } from './resources.ts';

/** What a payment or a saved card shows of its card: never the number. */
function cardObject(card: CardSummary) {
  return { brand: card.brand, last4: card.last4, exp_month: card.expMonth, exp_year: card.expYear };
}

function paymentObject(payment: Payment, publicUrl: string) {
  const { card } = payment;
  return {
    id: payment.id,
    object: 'payment',
    status: payment.status,
    amount: payment.amount,
    amount_capturable: payment.amountCapturable,
    amount_captured: payment.amountCaptured,
    canceled_after_capture: payment.canceledAfterCapture,
    currency: payment.currency,
    capture_method: payment.captureMethod,
    reference: payment.reference,
    payment_method_type: payment.paymentMethodType,
    card: card && cardObject(card),
    bank_debit: payment.bankDebit && { last4: payment.bankDebit.last4 },
    payment_method_token: payment.paymentMethodToken,
    next_action: nextAction(payment, publicUrl),
    error: payment.error,
    created: Math.floor(payment.createdMs / 1000),
    updated_ms: payment.updatedMs,
  };
}

function disputeObject(dispute: Dispute) {
  return {
    id: dispute.id,
    object: 'dispute',
    payment: dispute.paymentId,
    amount: dispute.amount,
    currency: dispute.currency,
    status: dispute.status,
    reason: dispute.reason,
    evidence_due_by: Math.floor(evidenceDueByMs(dispute) / 1000),
    evidence: dispute.evidence,
    created: Math.floor(dispute.createdMs / 1000),
    updated_ms: dispute.updatedMs,
  };
}

function refundObject(refund: Refund) {
  return {
    id: refund.id,
    object: 'refund',
    payment: refund.paymentId,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status,
    reason: refund.reason,
    reference: refund.reference,
    error: refund.error,
    created: Math.floor(refund.createdMs / 1000),
    updated_ms: refund.updatedMs,
  };
}

function paymentMethodObject(savedCard: SavedCard) {
  return {
    id: savedCard.id,
    object: 'payment_method',
    status: savedCard.status,
    card: cardObject(savedCard.card),
    created: Math.floor(savedCard.createdMs / 1000),
    updated_ms: savedCard.updatedMs,
  };
}

function payoutObject(payout: Payout) {
  return {
    id: payout.id,
    object: 'payout',
    amount: payout.amount,
    currency: payout.currency,
    status: payout.status,
    destination: { type: payout.destination.type, last4: payout.destination.last4 },
    reference: payout.reference,
    error: payout.error,
    created: Math.floor(payout.createdMs / 1000),
    updated_ms: payout.updatedMs,
  };
}

/** A session as its creator sees it; the payment token of the customer's answer is never part of it. */
function sessionObject(session: WalletSession) {
  return {
    id: session.id,
    object: 'session',
    wallet: session.wallet,
    session_token: session.token,
    amount: session.amount,
    currency: session.currency,
    expires_at: Math.floor(session.expiresMs / 1000),
  };
}

/** An endpoint as its key sees it: never its secret. */
export function endpointObject(endpoint: Endpoint) {
  return { id: endpoint.id, url: endpoint.url, created: Math.floor(endpoint.createdMs / 1000) };
}

/** What a route produced, as the API answers it (and a callback carries it): rendered by its `object`. */
export function resourceObject(resource: Resource | DisputeList, publicUrl: string): unknown {
  switch (resource.object) {
    case 'payment':
      return paymentObject(resource, publicUrl);
    case 'refund':
      return refundObject(resource);
    case 'dispute':
      return disputeObject(resource);
    case 'payment_method':
      return paymentMethodObject(resource);
    case 'payout':
      return payoutObject(resource);
    case 'session':
      return sessionObject(resource);
    case 'list':
      return { data: resource.data.map((item) => resourceObject(item, publicUrl)) };
  }
}

export function deliveryObject(delivery: Delivery) {
  return {
    event_id: delivery.eventId,
    type: delivery.type,
    object_id: delivery.objectId,
    payment_id: delivery.paymentId,
    url: delivery.endpoint.url,
    attempts: delivery.attempts,
    last_status: delivery.lastStatus,
    delivered: delivery.delivered,
  };
}
