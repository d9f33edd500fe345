// Our payment statuses and webhook event types in Medusa's words (docs/medusa.md, "Statuses"): the session
// statuses Medusa's payment module acts on when it authorizes, and the webhook actions its payment workflow takes.
import type { PaymentActions as PaymentAction } from '@medusajs/framework/types';
import { PaymentActions, PaymentSessionStatus } from '@medusajs/framework/utils';

/** Every status of our API's PaymentStatus enum (docs/payments.md, "States"). */
export type OrchestratorPaymentStatus =
  | 'REQUIRES_PAYMENT_METHOD'
  | 'REQUIRES_CONFIRMATION'
  | 'PROCESSING'
  | 'REQUIRES_CUSTOMER_ACTION'
  | 'REQUIRES_CAPTURE'
  | 'PARTIALLY_AUTHORIZED'
  | 'SUCCEEDED'
  | 'PARTIALLY_CAPTURED'
  | 'FAILED'
  | 'CANCELLED'
  | 'CANCELLED_POST_CAPTURE'
  | 'EXPIRED';

/**
 * As Medusa's Stripe provider maps a PaymentIntent's status: waiting for the customer's card or the processor
 * is pending, a redirect or 3D Secure is requires_more (the storefront follows `next_action`), an
 * authorization is authorized and a charge captured. A partial authorization is an error: Medusa authorizes
 * a session for its whole amount, so the storefront must start over.
 */
export const SESSION_STATUS_OF: Readonly<Record<OrchestratorPaymentStatus, PaymentSessionStatus>> = {
  REQUIRES_PAYMENT_METHOD: PaymentSessionStatus.PENDING,
  REQUIRES_CONFIRMATION: PaymentSessionStatus.PENDING,
  PROCESSING: PaymentSessionStatus.PENDING,
  REQUIRES_CUSTOMER_ACTION: PaymentSessionStatus.REQUIRES_MORE,
  REQUIRES_CAPTURE: PaymentSessionStatus.AUTHORIZED,
  PARTIALLY_AUTHORIZED: PaymentSessionStatus.ERROR,
  SUCCEEDED: PaymentSessionStatus.CAPTURED,
  // Only a capture reaches it, and Medusa captures through capturePayment: the session was authorized.
  PARTIALLY_CAPTURED: PaymentSessionStatus.AUTHORIZED,
  FAILED: PaymentSessionStatus.ERROR,
  CANCELLED: PaymentSessionStatus.CANCELED,
  CANCELLED_POST_CAPTURE: PaymentSessionStatus.CANCELED,
  EXPIRED: PaymentSessionStatus.CANCELED,
};

/** Which amount of the webhook's payment object a Medusa action is about. */
export type WebhookAmountField = 'amount' | 'amount_capturable' | 'amount_received';

/**
 * Our payment events as Medusa's webhook actions (its processPaymentWorkflow authorizes the session on
 * `authorized` and records a capture of `amount` on `captured`), with the amount each one reports, as
 * Medusa's Stripe provider reports amount_capturable and amount_received. Other events are not_supported.
 */
export const WEBHOOK_ACTION_OF: Readonly<Record<string, { action: PaymentAction; amount: WebhookAmountField }>> = {
  payment_authorized: { action: PaymentActions.AUTHORIZED, amount: 'amount_capturable' },
  payment_succeeded: { action: PaymentActions.SUCCESSFUL, amount: 'amount_received' },
  payment_captured: { action: PaymentActions.SUCCESSFUL, amount: 'amount_received' },
  payment_processing: { action: PaymentActions.PENDING, amount: 'amount' },
  action_required: { action: PaymentActions.REQUIRES_MORE, amount: 'amount' },
  payment_failed: { action: PaymentActions.FAILED, amount: 'amount' },
  payment_cancelled: { action: PaymentActions.CANCELED, amount: 'amount' },
};
