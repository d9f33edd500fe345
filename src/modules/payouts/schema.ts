import { PAYOUT_STATUSES } from './machine.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createPayoutInput, payoutIdInput } from './inputs.ts';

export const PayoutStatusEnum = builder.enumType('PayoutStatus', {
  values: PAYOUT_STATUSES,
  description:
    'CREATED until the processor answers; INITIATED (accepted, cancellable), PROCESSING (in transit), SUCCEEDED; FAILED, CANCELLED, EXPIRED; REVERSED when the bank sends a paid payout back; NOT_PERMITTED when the merchant’s own rules refuse it.',
});

const PayoutDestinationSummary = builder.simpleObject('PayoutDestinationSummary', {
  description: 'What may be shown of where a payout goes: never the card number or the IBAN.',
  fields: (t) => ({ type: t.string({ description: 'card or bank_account' }), last4: t.string() }),
});

export const PayoutRef = builder.prismaObject('Payout', {
  description: 'Money sent from the merchant to a card or bank account.',
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.expose('status', { type: PayoutStatusEnum }),
    amount: t.exposeInt('amount', { description: 'In minor units of the currency.' }),
    currency: t.exposeString('currency'),
    country: t.exposeString('country', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    destination: t.field({ type: PayoutDestinationSummary, resolve: (payout) => ({ type: payout.destinationType, last4: payout.destinationLast4 }) }),
    profileId: t.exposeString('profileId'),
    connector: t.exposeString('connectorName', { nullable: true }),
    connectorPayoutId: t.exposeString('connectorPayoutId', { nullable: true }),
    processorMerchantId: t.exposeString('processorMerchantId', {
      nullable: true,
      description:
        'The merchant whose connector account sent the payout when it is not the payout’s merchant (a connected merchant’s platform, docs/platforms.md); null otherwise.',
    }),
    errorCode: t.exposeString('errorCode', { nullable: true }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    syncExhaustedAt: t.expose('syncExhaustedAt', { type: 'DateTime', nullable: true }),
    version: t.exposeInt('version'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updated: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.queryField('payout', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PayoutRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.payouts.get(principal, args.id),
  }),
);

builder.queryField('payouts', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [PayoutRef],
    description: 'The merchant’s payouts in the key’s mode, newest first.',
    args: { status: t.arg({ type: PayoutStatusEnum }), first: t.arg.int({ description: '1 to 100; 20 by default.' }) },
    resolve: (_root, args, { principal, services }) => services.payouts.list(principal, args),
  }),
);

const PayoutCardInput = builder.inputType('PayoutCardInput', {
  fields: (t) => ({
    number: t.string({ required: true }),
    expiryMonth: t.int({ required: true }),
    expiryYear: t.int({ required: true }),
    holderName: t.string(),
  }),
});

const PayoutBankAccountInput = builder.inputType('PayoutBankAccountInput', {
  fields: (t) => ({ accountHolderName: t.string({ required: true }), iban: t.string({ required: true }) }),
});

const PayoutDestinationInput = builder.inputType('PayoutDestinationInput', {
  description: 'Exactly one of card or bankAccount.',
  fields: (t) => ({ card: t.field({ type: PayoutCardInput }), bankAccount: t.field({ type: PayoutBankAccountInput }) }),
});

const CreatePayoutInput = inputTypeFor('CreatePayoutInput', createPayoutInput, {
  fields: (t) => ({
    amount: t.int({ required: true, description: 'In minor units of the currency.' }),
    currency: t.string({ required: true }),
    destination: t.field({ type: PayoutDestinationInput, required: true }),
    country: t.string({ description: 'The recipient’s country (ISO 3166-1 alpha-2): only connector accounts serving it may send the payout.' }),
    description: t.string(),
    profileId: t.string(),
    connector: t.string({ description: 'Send with this connector (its first eligible account); otherwise the first eligible account.' }),
  }),
});

builder.mutationField('createPayout', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PayoutRef,
    description:
      'Sends money to a card or bank account. Answers the payout as the processor left it (`payout_initiated`, then `payout_processing`, `payout_success`…); a payout over the profile’s `payoutLimit` or to a country no payout connector serves is NOT_PERMITTED (`payout_not_permitted`) and is never sent.',
    args: { input: t.arg({ type: CreatePayoutInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.payouts.create(principal, input),
  }),
);

const CancelPayoutInput = inputTypeFor('CancelPayoutInput', payoutIdInput, { fields: (t) => ({ payoutId: t.string({ required: true }) }) });

builder.mutationField('cancelPayout', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PayoutRef,
    description: 'Cancels a payout the processor has not sent yet (INITIATED): `payout_cancelled`.',
    args: { input: t.arg({ type: CancelPayoutInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.payouts.cancel(principal, input),
  }),
);
