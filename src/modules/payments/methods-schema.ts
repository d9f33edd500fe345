// Payment methods: the input a payment is paid with, and what the SDK asks before confirming (eligible
// methods, wallet sessions). The seed's flow table is exposed as it is, so an SDK knows when to act.
import { PAYMENT_METHOD_TYPES } from './methods.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { SavedPaymentMethodRef } from '../customers/schema.ts';

export const PaymentMethodTypeEnum = builder.enumType('PaymentMethodType', {
  values: PAYMENT_METHOD_TYPES.map((type) => type.toUpperCase()) as Uppercase<(typeof PAYMENT_METHOD_TYPES)[number]>[],
});

const CardInput = builder.inputType('CardInput', {
  fields: (t) => ({
    number: t.string({ required: true }),
    expiryMonth: t.int({ required: true }),
    expiryYear: t.int({ required: true }),
    cvc: t.string({ required: true }),
    holderName: t.string(),
  }),
});

const BankDebitInput = builder.inputType('BankDebitInput', {
  description: 'A SEPA-style direct debit: the payment stays PROCESSING until the bank settles it.',
  fields: (t) => ({ accountHolderName: t.string({ required: true }), iban: t.string({ required: true }) }),
});

const WalletTokenInput = builder.inputType('WalletTokenInput', {
  description: 'The token a wallet or pay-later sheet gave the SDK, for a session from paymentSessions.',
  fields: (t) => ({
    type: t.string({ required: true, description: 'The provider, e.g. sandbox_pay or sandbox_later.' }),
    paymentToken: t.string({ required: true }),
  }),
});

const BankRedirectInput = builder.inputType('BankRedirectInput', {
  description: 'The customer authorizes at their bank after confirm (nextAction REDIRECT_TO_URL).',
  fields: (t) => ({ bank: t.string({ required: true, description: 'e.g. sandbox_bank.' }) }),
});

const BankTransferInput = builder.inputType('BankTransferInput', {
  description: 'The customer is shown transfer instructions after confirm; the payment succeeds when the funds arrive.',
  fields: (t) => ({ type: t.string({ description: '"sepa" (the default).' }) }),
});

const CryptoInput = builder.inputType('CryptoInput', {
  description: 'The customer is shown an address after confirm; the payment succeeds when the funds arrive.',
  fields: (t) => ({ network: t.string({ required: true, description: 'e.g. sandbox_chain.' }) }),
});

export const PaymentMethodDataInput = builder.inputType('PaymentMethodDataInput', {
  isOneOf: true,
  description: 'Exactly one payment method. Card numbers, CVCs, IBANs and wallet tokens go to the processor and are never stored.',
  fields: (t) => ({
    card: t.field({ type: CardInput }),
    bankDebit: t.field({ type: BankDebitInput }),
    wallet: t.field({ type: WalletTokenInput }),
    payLater: t.field({ type: WalletTokenInput }),
    bankRedirect: t.field({ type: BankRedirectInput }),
    bankTransfer: t.field({ type: BankTransferInput }),
    crypto: t.field({ type: CryptoInput }),
  }),
});

const WalletProvider = builder.simpleObject('WalletProvider', {
  fields: (t) => ({ provider: t.string(), type: t.field({ type: PaymentMethodTypeEnum }) }),
});

const EligiblePaymentMethod = builder.simpleObject('EligiblePaymentMethod', {
  description: 'A way this payment can be paid, with the seed’s flow for it.',
  fields: (t) => ({
    type: t.field({ type: PaymentMethodTypeEnum }),
    group: t.string({ description: 'The seed’s group: "cards without 3DS", "bank debits", ...' }),
    customerAction: t.string({ description: 'When the customer acts: before confirm (in the SDK, or via a session) or after (via redirect).' }),
    finalization: t.string({ description: '"immediate", or "later" (the payment stays PROCESSING until the processor reports).' }),
    connectors: t.stringList({ description: 'The connectors that would be tried, in routing order.' }),
    providers: t.field({ type: [WalletProvider], description: 'For wallets and pay-later: providers to open sessions for.' }),
    surchargeAmount: t.int({ description: 'What the merchant’s surcharge rule adds when paying with this method (0 for none).' }),
    totalAmount: t.int({ description: 'The amount the customer pays with this method: the payment’s amount plus the surcharge.' }),
  }),
});

const PaymentMethodsPayload = builder.simpleObject('PaymentMethods', {
  fields: (t) => ({
    paymentId: t.string(),
    amount: t.int(),
    currency: t.string(),
    methods: t.field({ type: [EligiblePaymentMethod] }),
    savedPaymentMethods: t.field({ type: [SavedPaymentMethodRef], description: 'The customer’s saved cards usable for this payment.' }),
  }),
});

builder.queryField('paymentMethods', (t) =>
  t.withAuth({ $any: { secretKey: true, publishableKey: true } }).field({
    type: PaymentMethodsPayload,
    description: 'The payment methods a payment can be paid with (SDK: publishable key with the client secret).',
    args: { clientSecret: t.arg.string({ required: true }) },
    resolve: async (_root, { clientSecret }, { principal, services }) => {
      const { payment, methods, savedCards } = await services.eligibleMethods.paymentMethods(principal, clientSecret);
      return {
        paymentId: payment.id,
        amount: payment.amount,
        currency: payment.currency,
        methods: methods.map((method) => ({
          type: upper(method.type),
          group: method.flow.group,
          customerAction: method.flow.customerAction,
          finalization: method.flow.finalization,
          connectors: method.connectors,
          providers: method.providers.map((provider) => ({ provider: provider.provider, type: upper(provider.type) })),
          surchargeAmount: method.surchargeAmount,
          totalAmount: payment.amount + method.surchargeAmount,
        })),
        savedPaymentMethods: savedCards,
      };
    },
  }),
);

const PaymentSession = builder.simpleObject('PaymentSession', {
  description: 'What a wallet or pay-later SDK starts from; its sheet returns the paymentToken to confirm with.',
  fields: (t) => ({
    provider: t.string(),
    type: t.field({ type: PaymentMethodTypeEnum }),
    connector: t.string(),
    sessionToken: t.string(),
    expiresAt: t.field({ type: 'DateTime' }),
  }),
});

builder.queryField('paymentSessions', (t) =>
  t.withAuth({ $any: { secretKey: true, publishableKey: true } }).field({
    type: [PaymentSession],
    description: 'Session tokens for wallet and pay-later providers (all offered ones when `wallets` is omitted).',
    args: { clientSecret: t.arg.string({ required: true }), wallets: t.arg.stringList() },
    resolve: async (_root, { clientSecret, wallets }, { principal, services }) =>
      (await services.eligibleMethods.paymentSessions(principal, clientSecret, wallets ?? null)).map((session) => ({ ...session, type: upper(session.type) })),
  }),
);

const upper = <Type extends string>(type: Type) => type.toUpperCase() as Uppercase<Type>;
