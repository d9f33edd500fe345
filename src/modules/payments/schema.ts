import { ATTEMPT_STATUSES, INTENT_STATUSES } from './machine/statuses.ts';
import type { ProcessorNextAction } from '../connectors/port.ts';
import type { Principal } from '../../kernel/principal.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { CLAIM_ON_FIRST_WRITE } from '../../platform/http/idempotency.ts';
import { RESOLVES_FROM_PARENT, selectionResolvesFromValue } from '../../platform/graphql/resolves-from-parent.ts';
import { cancelPaymentInput, capturePaymentInput, confirmPaymentInput, createPaymentInput } from './inputs.ts';
import { PaymentMethodDataInput } from './methods-schema.ts';
import { termsOf } from '../ledger/index.ts';

/**
 * What the merchant's backend may read but a browser holding a publishable key may not (its own data,
 * ids of its setup, who did what): null unless the caller has the secret key. Stripe draws the same line.
 */
function forSecretKey<T>(principal: Principal, value: T): T | null {
  return principal.kind === 'secretKey' ? value : null;
}

/** A field reading nothing stored (RESOLVES_FROM_PARENT): a payment's active attempt comes with it from the service. */
const fromParent = { [RESOLVES_FROM_PARENT]: true };

const ERROR_CODE_DESCRIPTION =
  "Why it failed: a processor's decline as a code of the decline catalog, the same at every processor (docs/declines.md), or our own error code.";
const PROCESSOR_ERROR_CODE_DESCRIPTION =
  "The processor's own code of the failure, as it sent it (Stripe's decline_code, Adyen's refusalReasonCode); null when it sent none.";

export const PaymentStatusEnum = builder.enumType('PaymentStatus', { values: INTENT_STATUSES });
export const AttemptStatusEnum = builder.enumType('AttemptStatus', { values: ATTEMPT_STATUSES });
export const CaptureMethodEnum = builder.enumType('CaptureMethod', { values: ['AUTOMATIC', 'MANUAL'] as const });
export const AuthenticationTypeEnum = builder.enumType('AuthenticationType', { values: ['THREE_DS', 'NO_THREE_DS'] as const });
const SetupFutureUsageEnum = builder.enumType('SetupFutureUsage', { values: ['OFF_SESSION', 'ON_SESSION'] as const });
const NextActionTypeEnum = builder.enumType('NextActionType', { values: ['REDIRECT_TO_URL', 'DISPLAY_INSTRUCTIONS'] as const });

const PaymentSplit = builder.simpleObject('PaymentSplit', {
  fields: (t) => ({ merchantId: t.string(), amount: t.int() }),
});

const NextAction = builder.simpleObject('NextAction', {
  description:
    'What the customer must do next: open `redirectToUrl` (3D Secure, a bank) and return to the merchant; for DISPLAY_INSTRUCTIONS (bank transfers, crypto) also show `instructions`.',
  fields: (t) => ({
    type: t.field({ type: NextActionTypeEnum }),
    redirectToUrl: t.string(),
    instructions: t.field({ type: 'JSON', nullable: true, description: 'Reference, amount, account or address to pay to.' }),
  }),
});

const CardDetails = builder.simpleObject('CardDetails', {
  description: 'What is kept of a card: never the number or the CVC.',
  fields: (t) => ({
    brand: t.string(),
    last4: t.string(),
    expiryMonth: t.int(),
    expiryYear: t.int(),
    holderName: t.string({ nullable: true }),
    fingerprint: t.string({ nullable: true, description: 'Equal for the same card number at this merchant; null for a publishable key.' }),
  }),
});

export const PaymentAttemptRef = builder.prismaObject('PaymentAttempt', {
  description: 'One try of a payment at a processor.',
  fields: (t) => ({
    id: t.exposeID('id'),
    attemptNumber: t.exposeInt('attemptNumber'),
    status: t.expose('status', { type: AttemptStatusEnum }),
    amount: t.exposeInt('amount'),
    amountCapturable: t.exposeInt('amountCapturable'),
    amountCaptured: t.exposeInt('amountCaptured'),
    connector: t.exposeString('connectorName', { nullable: true, extensions: fromParent }),
    connectorAccountId: t.string({
      extensions: fromParent,
      nullable: true,
      description: 'Null for a publishable key.',
      resolve: (attempt, _args, { principal }) => forSecretKey(principal, attempt.connectorAccountId),
    }),
    connectorTransactionId: t.exposeString('connectorTransactionId', { nullable: true }),
    paymentMethodType: t.exposeString('paymentMethodType', { nullable: true }),
    paymentMethodDetails: t.expose('paymentMethodDetails', {
      type: 'JSON',
      nullable: true,
      description: 'What may be shown of a method that is not a card: the wallet provider, the last four of an IBAN, the bank.',
    }),
    savedPaymentMethodId: t.exposeString('savedPaymentMethodId', { nullable: true }),
    card: t.field({
      extensions: fromParent,
      type: CardDetails,
      nullable: true,
      resolve: (attempt, _args, { principal }) =>
        attempt.cardLast4 === null
          ? null
          : {
              brand: attempt.cardBrand ?? 'UNKNOWN',
              last4: attempt.cardLast4,
              expiryMonth: attempt.cardExpiryMonth ?? 0,
              expiryYear: attempt.cardExpiryYear ?? 0,
              holderName: attempt.cardHolderName,
              fingerprint: forSecretKey(principal, attempt.cardFingerprint),
            },
    }),
    errorCode: t.exposeString('errorCode', { nullable: true, description: ERROR_CODE_DESCRIPTION }),
    processorErrorCode: t.exposeString('processorErrorCode', { nullable: true, description: PROCESSOR_ERROR_CODE_DESCRIPTION }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    processorError: t.field({
      extensions: fromParent,
      type: 'JSON',
      nullable: true,
      description:
        "The processor's error body of the failure as it sent it (Stripe's error object, Adyen's refusal or HTTP error), without card data or secrets and at most 8 KB; null when it sent none, and for a publishable key.",
      resolve: (attempt, _args, { principal }) => forSecretKey(principal, attempt.processorError),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('PaymentStatusHistory', {
  name: 'PaymentStatusChange',
  description: 'One transition of the payment (subject "intent") or of an attempt (subject "attempt").',
  fields: (t) => ({
    subject: t.exposeString('subject'),
    attemptId: t.exposeString('attemptId', { nullable: true }),
    fromStatus: t.exposeString('fromStatus', { nullable: true }),
    toStatus: t.exposeString('toStatus'),
    trigger: t.exposeString('trigger'),
    actor: t.string({
      nullable: true,
      description:
        'The API key id (a dashboard session’s id, ses_…, for a signed-in user), "processor", "sync" or "redirect" that caused it; null for a publishable key.',
      resolve: (change, _args, { principal }) => forSecretKey(principal, change.actor),
    }),
    at: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const PaymentRef = builder.prismaObject('PaymentIntent', {
  name: 'Payment',
  fields: (t) => ({
    id: t.exposeID('id'),
    clientSecret: t.string({
      extensions: fromParent,
      description: 'Give this, with a publishable key, to the SDK: it authorizes SDK calls on this payment only.',
      resolve: (payment, _args, { services }) => services.payments.clientSecretFor(payment.id),
    }),
    status: t.expose('status', { type: PaymentStatusEnum }),
    amount: t.exposeInt('amount', { description: 'In minor units of the currency (cents, yen, fils).' }),
    currency: t.exposeString('currency'),
    captureMethod: t.expose('captureMethod', { type: CaptureMethodEnum }),
    authenticationType: t.expose('authenticationType', { type: AuthenticationTypeEnum }),
    amountCapturable: t.exposeInt('amountCapturable'),
    amountReceived: t.exposeInt('amountReceived', { description: 'What the processor captured: the amount plus any surcharge.' }),
    surchargeAmount: t.exposeInt('surchargeAmount', {
      description: 'What the profile’s surcharge rule added at confirm for the method paid with; the processor is asked for amount + surchargeAmount.',
    }),
    country: t.exposeString('country', { nullable: true }),
    customerId: t.string({
      extensions: fromParent,
      nullable: true,
      description: 'Null for a publishable key.',
      resolve: (payment, _args, { principal }) => forSecretKey(principal, payment.customerId),
    }),
    email: t.string({
      extensions: fromParent,
      nullable: true,
      description: 'The customer’s email as given at createPayment; null for a publishable key.',
      resolve: (payment, _args, { principal }) => forSecretKey(principal, payment.email),
    }),
    description: t.exposeString('description', { nullable: true }),
    metadata: t.field({
      extensions: fromParent,
      type: 'JSON',
      nullable: true,
      description: 'The merchant’s own data: null for a publishable key, as a browser must not read it.',
      resolve: (payment, _args, { principal }) => forSecretKey(principal, payment.metadata),
    }),
    returnUrl: t.exposeString('returnUrl', { nullable: true }),
    setupFutureUsage: t.field({
      extensions: fromParent,
      type: SetupFutureUsageEnum,
      nullable: true,
      resolve: (payment) => payment.setupFutureUsage as 'OFF_SESSION' | 'ON_SESSION' | null,
    }),
    profileId: t.exposeString('profileId'),
    initiatedByPlatformId: t.string({
      extensions: fromParent,
      nullable: true,
      description:
        'The platform that created this payment acting for its connected merchant (X-Connected-Merchant-Id); null otherwise and for a publishable key.',
      resolve: (payment, _args, { principal }) => forSecretKey(principal, payment.initiatedByPlatformId),
    }),
    applicationFeeAmount: t.int({
      extensions: fromParent,
      nullable: true,
      description: 'The platform’s fee kept from the payment (docs/ledger.md), 0 for none; null for a publishable key.',
      resolve: (payment, _args, { principal }) => forSecretKey(principal, payment.applicationFeeAmount),
    }),
    splits: t.field({
      extensions: fromParent,
      type: [PaymentSplit],
      nullable: true,
      description: 'How the amount less the fee is split among the platform’s connected merchants; null when it is not, and for a publishable key.',
      resolve: (payment, _args, { principal }) => forSecretKey(principal, payment.splits === null ? null : termsOf(payment).splits),
    }),
    processorMerchantId: t.string({
      extensions: fromParent,
      nullable: true,
      description:
        'The merchant whose connector account processed the active attempt when it is not this payment’s merchant (a connected merchant’s platform, docs/platforms.md); null otherwise and for a publishable key.',
      resolve: async (payment, _args, { principal, services }) =>
        forSecretKey(principal, (await services.payments.activeAttemptOf(payment)).processorMerchantId),
    }),
    attemptCount: t.exposeInt('attemptCount'),
    cancellationReason: t.exposeString('cancellationReason', { nullable: true }),
    errorCode: t.exposeString('errorCode', { nullable: true, description: ERROR_CODE_DESCRIPTION }),
    processorErrorCode: t.exposeString('processorErrorCode', { nullable: true, description: PROCESSOR_ERROR_CODE_DESCRIPTION }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    version: t.exposeInt('version', { description: 'Increases with every change; order updates by it.' }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the payment expires if it is not confirmed by then (the profile’s session expiry).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updated: t.expose('updatedAt', { type: 'DateTime', extensions: fromParent, description: 'When the payment last changed (webhook ordering uses it).' }),
    attempts: t.relation('attempts', { query: { orderBy: { attemptNumber: 'asc' } } }),
    activeAttempt: t.field({
      extensions: fromParent,
      type: PaymentAttemptRef,
      resolve: (payment, _args, { services }) => services.payments.activeAttemptOf(payment),
    }),
    connector: t.string({
      extensions: fromParent,
      nullable: true,
      resolve: async (payment, _args, { services }) => (await services.payments.activeAttemptOf(payment)).connectorName,
    }),
    nextAction: t.field({
      extensions: fromParent,
      type: NextAction,
      nullable: true,
      resolve: async (payment, _args, { services }) => {
        const attempt = await services.payments.activeAttemptOf(payment);
        if (payment.status !== 'REQUIRES_CUSTOMER_ACTION' || !attempt.redirectUrl) return null;
        const action = attempt.nextAction as ProcessorNextAction | null;
        return action?.type === 'display_instructions'
          ? { type: 'DISPLAY_INSTRUCTIONS' as const, redirectToUrl: action.url, instructions: action.instructions }
          : { type: 'REDIRECT_TO_URL' as const, redirectToUrl: attempt.redirectUrl, instructions: null };
      },
    }),
    history: t.relation('history', { query: { orderBy: { id: 'asc' } }, description: 'Every transition, oldest first.' }),
  }),
});

builder.queryField('payment', (t) =>
  t.withAuth({ $any: { secretKey: true, publishableKey: true } }).field({
    type: PaymentRef,
    description: 'A payment: with the secret key, or with a publishable key and the payment’s client secret.',
    args: { id: t.arg.string({ required: true }), clientSecret: t.arg.string() },
    resolve: (_root, args, { principal, services }) => services.payments.getVisible(principal, args.id, args.clientSecret),
  }),
);

builder.subscriptionField('paymentUpdated', (t) =>
  t.withAuth({ $any: { secretKey: true, publishableKey: true } }).field({
    type: PaymentRef,
    description:
      'The payment each time a change of it commits (every status transition, in order; `updated` and `version` order them). The secret key, or a publishable key with the payment’s client secret; checked when the subscription starts.',
    args: { paymentId: t.arg.string({ required: true }), clientSecret: t.arg.string() },
    subscribe: async (_root, args, { principal, services, live, gate, clientIp }) => {
      // The payment query's rule, before anything is streamed: a refused subscriber gets an error, not a stream.
      await services.payments.getVisible(principal, args.paymentId, args.clientSecret);
      return gate.open(principal, live.paymentChanges(args.paymentId), { paymentId: args.paymentId, clientIp });
    },
    // The payload is the payment as committed (not re-read), so no transition is skipped or repeated.
    resolve: (payment) => payment,
  }),
);

builder.subscriptionField('paymentChanges', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentRef,
    description:
      'Every payment of the profile in the key’s mode each time a change of it commits, its creation included, for live dashboards; secret key. Live only: read the payments query first, then apply what arrives (`version` orders a payment’s changes).',
    args: { profileId: t.arg.string({ required: true }) },
    subscribe: async (_root, args, { principal, services, live, gate }) => {
      await services.businessProfiles.get(principal, args.profileId);
      return gate.open(principal, live.profilePaymentChanges(args.profileId, principal.mode));
    },
    resolve: (payment) => payment,
  }),
);

// Hand-written, not prismaConnection: that needs @pothos/plugin-relay (not a dependency), whose types would change
// PageInfo and edge nullability in schema.graphql, and whose cursors would replace ours (createdAt|id, a forged one INVALID_INPUT on `after`).
const PaymentEdge = builder.simpleObject('PaymentEdge', { fields: (t) => ({ cursor: t.string(), node: t.field({ type: PaymentRef }) }) });
const PageInfo = builder.simpleObject('PageInfo', { fields: (t) => ({ hasNextPage: t.boolean(), endCursor: t.string({ nullable: true }) }) });
const PaymentConnection = builder.simpleObject('PaymentConnection', {
  fields: (t) => ({ edges: t.field({ type: [PaymentEdge] }), pageInfo: t.field({ type: PageInfo }) }),
});

builder.queryField('payments', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentConnection,
    description: 'The merchant’s payments in the key’s mode, newest first.',
    args: {
      first: t.arg.int({ description: '1 to 100; 20 by default.' }),
      after: t.arg.string(),
      status: t.arg({ type: PaymentStatusEnum }),
      customerId: t.arg.string(),
      createdAfter: t.arg({ type: 'DateTime' }),
      createdBefore: t.arg({ type: 'DateTime' }),
      search: t.arg.string({
        description:
          'Up to 200 characters: a payment id (pay_…), a customer’s email (any case), a card’s last four digits (any attempt), or an amount in major units with a decimal point (12.50 is 1250 cents, or 12.50 in any currency of two decimals; 500.00 also finds 500 yen).',
      }),
      connector: t.arg.string({ description: 'The connector of the payment’s active attempt, such as sandbox or stripe.' }),
      paymentMethod: t.arg.string({
        description: 'The method type of the payment’s active attempt: card, bank_debit, wallet, pay_later, bank_redirect, bank_transfer or crypto.',
      }),
      currency: t.arg.string({ description: 'An ISO 4217 code.' }),
    },
    resolve: (_root, args, { principal, services }) => services.payments.list(principal, args),
  }),
);

const PaymentSplitInput = builder.inputType('PaymentSplitInput', {
  fields: (t) => ({
    merchantId: t.string({ required: true, description: 'A merchant connected to the platform.' }),
    amount: t.int({ required: true, description: 'Its share, in minor units.' }),
  }),
});

const CreatePaymentInput = inputTypeFor('CreatePaymentInput', createPaymentInput, {
  fields: (t) => ({
    amount: t.int({ required: true, description: 'In minor units of the currency.' }),
    currency: t.string({ required: true, description: 'An ISO 4217 code.' }),
    captureMethod: t.field({ type: CaptureMethodEnum, description: 'AUTOMATIC by default.' }),
    authenticationType: t.field({ type: AuthenticationTypeEnum, description: 'NO_THREE_DS by default; THREE_DS asks the processor for 3D Secure.' }),
    confirm: t.boolean({ description: 'Confirm in the same call (needs paymentMethodData).' }),
    customerId: t.string({ description: 'Your id for the customer: cus_ and up to 60 letters, digits, _ or -.' }),
    country: t.string({ description: 'The customer’s billing country (ISO 3166-1 alpha-2), for connectors that accept some countries only.' }),
    email: t.string({ description: 'The customer’s email, up to 254 characters; the payments query finds the payment by it (any case).' }),
    description: t.string(),
    metadata: t.field({ type: 'JSON', description: 'Up to 50 string values, keys up to 40 and values up to 500 characters.' }),
    returnUrl: t.string(),
    paymentMethodData: t.field({ type: PaymentMethodDataInput }),
    setupFutureUsage: t.field({ type: SetupFutureUsageEnum }),
    mandateId: t.string(),
    profileId: t.string({ description: "The merchant's default profile when omitted." }),
    connectors: t.stringList({ description: 'Connector names in order of preference.' }),
    applicationFeeAmount: t.int({ description: 'A platform’s fee kept from the payment, in minor units (docs/ledger.md); 0 by default.' }),
    splits: t.field({
      type: [PaymentSplitInput],
      description:
        'A marketplace payment’s shares, one per connected merchant of the platform, adding up to amount less applicationFeeAmount (docs/ledger.md).',
    }),
  }),
});

builder.mutationField('createPayment', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentRef,
    // The payment's insert takes the Idempotency-Key (docs/architecture.md, "Idempotency"): one statement fewer.
    extensions: { [CLAIM_ON_FIRST_WRITE]: true },
    args: { input: t.arg({ type: CreatePaymentInput, required: true }) },
    resolve: (_root, { input }, { principal, services, idempotencyClaim }, info) =>
      services.payments.create(
        principal,
        input,
        {},
        idempotencyClaim && { claim: idempotencyClaim, answerReadsNothingStored: selectionResolvesFromValue(info) },
      ),
  }),
);

const ConfirmPaymentInput = inputTypeFor('ConfirmPaymentInput', confirmPaymentInput, {
  fields: (t) => ({
    clientSecret: t.string({ required: true }),
    paymentMethodData: t.field({ type: PaymentMethodDataInput }),
    returnUrl: t.string(),
    savePaymentMethod: t.boolean({ description: 'Keep the card (the processor’s token) on the payment’s customer once it succeeds.' }),
    paymentMethodId: t.string({ description: 'A saved card of the payment’s customer, instead of paymentMethodData.' }),
    cardCvc: t.string({ description: 'The CVC of the saved card (paymentMethodId).' }),
  }),
});

builder.mutationField('confirmPayment', (t) =>
  t.withAuth({ $any: { secretKey: true, publishableKey: true } }).field({
    type: PaymentRef,
    description: 'Confirms with the payment method (SDK: publishable key and client secret; or the secret key).',
    args: { input: t.arg({ type: ConfirmPaymentInput, required: true }) },
    resolve: (_root, { input }, { principal, services, limits }) =>
      principal.kind === 'publishableKey' ? services.paymentLinks.confirmWithinLimits(limits, principal, input) : services.payments.confirm(principal, input),
  }),
);

const CapturePaymentInput = inputTypeFor('CapturePaymentInput', capturePaymentInput, {
  fields: (t) => ({
    paymentId: t.string({ required: true }),
    amountToCapture: t.int({ description: 'All that is capturable by default; less captures partially and releases the rest.' }),
  }),
});

builder.mutationField('capturePayment', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentRef,
    args: { input: t.arg({ type: CapturePaymentInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.payments.capture(principal, input),
  }),
);

const CancelPaymentInput = inputTypeFor('CancelPaymentInput', cancelPaymentInput, {
  fields: (t) => ({ paymentId: t.string({ required: true }), cancellationReason: t.string() }),
});

builder.mutationField('cancelPayment', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentRef,
    description:
      'Cancels before confirmation or during authentication (not at the processor), or voids an authorization at the processor. A payment that took money is INVALID_STATE: see cancelPaymentPostCapture.',
    args: { input: t.arg({ type: CancelPaymentInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.payments.cancel(principal, input),
  }),
);

builder.mutationField('cancelPaymentPostCapture', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentRef,
    description: 'Voids a SUCCEEDED payment at the processor (where it supports that) with no refund and no dispute: CANCELLED_POST_CAPTURE, amountReceived 0.',
    args: { input: t.arg({ type: CancelPaymentInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.payments.cancelPostCapture(principal, input),
  }),
);

const SyncPaymentInput = builder.inputType('SyncPaymentInput', { fields: (t) => ({ paymentId: t.string({ required: true }) }) });

builder.mutationField('syncPayment', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentRef,
    description: 'Asks the processor for the payment’s current state (for connectors without callbacks, or after a timeout).',
    args: { input: t.arg({ type: SyncPaymentInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.payments.sync(principal, input.paymentId),
  }),
);
