// Adyen's answers as the port's objects: its resultCodes and its notifications' eventCodes mapped to our
// statuses by table (one row per code; every row is tested), the rest renamed.
import type { ProcessorPaymentStatus } from '../../payments/machine/attempt.ts';
import type { CaptureMethod } from '../../payments/machine/statuses.ts';
import type { ConnectorCallback, ProcessorDispute, ProcessorPayment, ProcessorRefund } from '../port.ts';
import { paymentErrorOf, processingErrorOf } from './decline-map.ts';
import { additionalText, CAPTURE_METADATA_KEY, PARTIAL_CAPTURE_SUFFIX, type AdyenPaymentResponse, type NotificationItem, type ResultCode } from './wire.ts';

/** A resultCode of /payments or /payments/details as our status, for a payment captured `captureMethod`. */
export const RESULT_CODE_STATUSES = {
  Authorised: (captureMethod) => (captureMethod === 'MANUAL' ? 'authorized' : 'captured'),
  Refused: () => 'failed',
  // The shopper is sent to the issuer's page (3DS) or the bank's.
  RedirectShopper: () => 'requires_authentication',
  // Native 3DS2 steps, which the connector turns off (wire.ts); read as an authentication to finish.
  IdentifyShopper: () => 'requires_authentication',
  ChallengeShopper: () => 'requires_authentication',
  // Adyen has not got the outcome yet: its AUTHORISATION notification will tell.
  Pending: () => 'processing',
  Received: () => 'processing',
  Cancelled: () => 'voided',
  Error: () => 'failed',
} as const satisfies Record<ResultCode, (captureMethod: CaptureMethod) => ProcessorPaymentStatus>;

export function toProcessorPayment(response: AdyenPaymentResponse, captureMethod: CaptureMethod, amount: number, reference: string): ProcessorPayment {
  const status = RESULT_CODE_STATUSES[response.resultCode](captureMethod);
  const action = response.action;
  return {
    // A refusal before Adyen made a payment has no pspReference: our reference stands for it.
    transactionId: response.pspReference ?? reference,
    status,
    amountCapturable: status === 'authorized' ? amount : 0,
    amountCaptured: status === 'captured' ? amount : 0,
    nextAction: status === 'requires_authentication' && action?.url ? { type: 'redirect', url: action.url } : null,
    paymentMethodToken: null,
    error: status !== 'failed' ? null : errorOf(response),
  };
}

function errorOf(response: AdyenPaymentResponse): ProcessorPayment['error'] {
  if (response.resultCode === 'Error') return processingErrorOf(response.refusalReason, response);
  return paymentErrorOf(response.refusalReasonCode, response.refusalReason, response);
}

type Callback = ConnectorCallback | null;
type EventReader = (item: NotificationItem, eventId: string) => Callback;

const succeeded = (item: NotificationItem) => item.success === 'true';

/** A notification about the payment: its pspReference (or, for a modification, the original's). */
function paymentCallback(
  item: NotificationItem,
  eventId: string,
  payment: Omit<ProcessorPayment, 'transactionId' | 'nextAction' | 'paymentMethodToken'>,
): Callback {
  const transactionId = item.originalReference ?? item.pspReference;
  // Only an authorisation's merchantReference is our attempt id; a modification's is the modification's own.
  const reference = item.eventCode === 'AUTHORISATION' ? item.merchantReference : null;
  return { kind: 'payment', eventId, eventType: item.eventCode, reference, payment: { transactionId, nextAction: null, paymentMethodToken: null, ...payment } };
}

const failedPayment = (item: NotificationItem, eventId: string): Callback =>
  paymentCallback(item, eventId, { status: 'failed', amountCapturable: 0, amountCaptured: 0, error: paymentErrorOf(undefined, item.reason, item) });

/** A capture Adyen could not make, whether or not it reported it done before (CAPTURE_FAILED follows a CAPTURE). */
const failedCapture = (item: NotificationItem, eventId: string): Callback =>
  paymentCallback(item, eventId, { status: 'capture_failed', amountCapturable: 0, amountCaptured: 0, error: paymentErrorOf(undefined, item.reason, item) });

function refundCallback(item: NotificationItem, eventId: string, status: ProcessorRefund['status']): Callback {
  const error = status === 'failed' ? { code: 'refund_failed', message: item.reason ?? 'Adyen could not refund' } : null;
  const refund = { refundId: item.pspReference, status, amount: item.amount.value, error };
  return { kind: 'refund', eventId, eventType: item.eventCode, reference: item.merchantReference, refund };
}

/** A dispute notification's additionalData.disputeStatus as ours. */
export const DISPUTE_STATUSES = {
  Undefended: 'opened',
  Pending: 'opened',
  Responded: 'challenged',
  Accepted: 'accepted',
  Won: 'won',
  Lost: 'lost',
  Expired: 'expired',
} as const satisfies Record<string, ProcessorDispute['status']>;

function disputeCallback(item: NotificationItem, eventId: string, fallback: ProcessorDispute['status']): Callback {
  const disputeStatus = additionalText(item, 'disputeStatus');
  const defensePeriodEndsAt = additionalText(item, 'defensePeriodEndsAt');
  const dueBy = defensePeriodEndsAt === undefined ? null : new Date(defensePeriodEndsAt);
  const dispute: ProcessorDispute = {
    disputeId: item.pspReference,
    transactionId: item.originalReference ?? item.pspReference,
    status:
      disputeStatus !== undefined && Object.hasOwn(DISPUTE_STATUSES, disputeStatus)
        ? DISPUTE_STATUSES[disputeStatus as keyof typeof DISPUTE_STATUSES]
        : fallback,
    amount: item.amount.value,
    currency: item.amount.currency,
    reason: additionalText(item, 'chargebackReasonCode') ?? item.reason ?? null,
    evidenceDueBy: dueBy !== null && !Number.isNaN(dueBy.getTime()) ? dueBy : null,
  };
  return { kind: 'dispute', eventId, eventType: item.eventCode, reference: null, dispute };
}

/** Each eventCode the connector acts on; a success="false" is the event's failure. Others are ignored. */
export const EVENT_CODES: Readonly<Record<string, EventReader>> = {
  AUTHORISATION: (item, eventId) => {
    if (!succeeded(item)) return failedPayment(item, eventId);
    // Whether the money is taken depends on the capture method the payment was sent with (wire.ts).
    const method = additionalText(item, `metadata.${CAPTURE_METADATA_KEY}`);
    if (method === 'manual')
      return paymentCallback(item, eventId, { status: 'authorized', amountCapturable: item.amount.value, amountCaptured: 0, error: null });
    if (method === 'automatic')
      return paymentCallback(item, eventId, { status: 'captured', amountCapturable: 0, amountCaptured: item.amount.value, error: null });
    return null;
  },
  CAPTURE: (item, eventId) => {
    if (!succeeded(item)) return failedCapture(item, eventId);
    const status = item.merchantReference.endsWith(PARTIAL_CAPTURE_SUFFIX) ? 'partially_captured' : 'captured';
    return paymentCallback(item, eventId, { status, amountCapturable: 0, amountCaptured: item.amount.value, error: null });
  },
  CAPTURE_FAILED: failedCapture,
  CANCELLATION: (item, eventId) =>
    succeeded(item) ? paymentCallback(item, eventId, { status: 'voided', amountCapturable: 0, amountCaptured: 0, error: null }) : failedPayment(item, eventId),
  REFUND: (item, eventId) => refundCallback(item, eventId, succeeded(item) ? 'succeeded' : 'failed'),
  REFUND_FAILED: (item, eventId) => refundCallback(item, eventId, 'failed'),
  NOTIFICATION_OF_CHARGEBACK: (item, eventId) => disputeCallback(item, eventId, 'opened'),
  CHARGEBACK: (item, eventId) => disputeCallback(item, eventId, 'opened'),
  CHARGEBACK_REVERSED: (item, eventId) => disputeCallback(item, eventId, 'won'),
  SECOND_CHARGEBACK: (item, eventId) => disputeCallback(item, eventId, 'lost'),
  PREARBITRATION_WON: (item, eventId) => disputeCallback(item, eventId, 'won'),
  PREARBITRATION_LOST: (item, eventId) => disputeCallback(item, eventId, 'lost'),
};
