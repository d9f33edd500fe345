// The SDK's public types under clean names: the fragments of operations.graphql and the schema's inputs and
// enums, as GraphQL Code Generator types them from schema.graphql.
import type {
  ConfirmPaymentInput,
  SdkNodeBusinessProfileFragment,
  SdkNodeCustomerFragment,
  SdkNodeDisputeFragment,
  SdkNodeEventFragment,
  SdkNodePaymentAttemptFragment,
  SdkNodePaymentFragment,
  SdkNodePaymentLinkFragment,
  SdkNodePayoutFragment,
  SdkNodeRefundFragment,
} from './gql/graphql.ts';

export type Payment = SdkNodePaymentFragment;
export type PaymentAttempt = SdkNodePaymentAttemptFragment;
export type NextAction = NonNullable<Payment['nextAction']>;
export type Refund = SdkNodeRefundFragment;
export type Customer = SdkNodeCustomerFragment;
export type BusinessProfile = SdkNodeBusinessProfileFragment;
export type SurchargeRule = BusinessProfile['surcharges'][number];
export type SavedPaymentMethod = Customer['savedPaymentMethods'][number];
export type PaymentLink = SdkNodePaymentLinkFragment;
export type Dispute = SdkNodeDisputeFragment;
export type Payout = SdkNodePayoutFragment;
export type Event = SdkNodeEventFragment;
export type WebhookDeliveryAttempt = Event['attempts'][number];
/** What confirm takes beside the payment: the client secret is the payment's own. */
export type ConfirmPaymentParams = Omit<ConfirmPaymentInput, 'clientSecret'>;

export type {
  AttemptStatus,
  AuthenticationType,
  BankDebitInput,
  BankRedirectInput,
  BankTransferInput,
  CaptureMethod,
  CardInput,
  ConfirmPaymentInput,
  CreatePaymentInput,
  CreatePaymentLinkInput,
  CreatePayoutInput,
  CreateRefundInput,
  CryptoInput,
  DeliveryKind,
  DisputeStatus,
  EventDeliveryStatus,
  EventType,
  Mode,
  NextActionType,
  PaymentMethodDataInput,
  PaymentMethodType,
  PaymentSplitInput,
  PaymentStatus,
  PayoutBankAccountInput,
  PayoutCardInput,
  PayoutDestinationInput,
  PayoutStatus,
  RefundStatus,
  SetupFutureUsage,
  WalletTokenInput,
} from './gql/graphql.ts';
