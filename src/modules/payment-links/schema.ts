import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createPaymentLinkInput } from './inputs.ts';
import { PaymentRef } from '../payments/schema.ts';

export const PaymentLinkRef = builder.prismaObject('PaymentLink', {
  description: 'A reusable hosted payment page URL; each use creates its own payment.',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.string({ description: 'Share this with customers.', resolve: (link, _args, { services }) => services.paymentLinks.urlOf(link) }),
    currency: t.exposeString('currency'),
    amount: t.exposeInt('amount', { nullable: true, description: 'A fixed amount; null when the customer chooses one between minAmount and maxAmount.' }),
    minAmount: t.exposeInt('minAmount', { nullable: true }),
    maxAmount: t.exposeInt('maxAmount', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    profileId: t.exposeString('profileId'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    active: t.boolean({
      description: 'False once deactivated (deactivatePaymentLink): the link takes no more uses.',
      resolve: (link) => link.deactivatedAt === null,
    }),
    deactivatedAt: t.expose('deactivatedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    payments: t.field({
      type: [PaymentRef],
      description: 'The payments made through the link, newest first (at most 100).',
      resolve: (link, _args, { services }) => services.paymentLinks.paymentsOf(link.id),
    }),
  }),
});

builder.prismaObjectField('PaymentIntent', 'paymentLinkId', (t) =>
  t.exposeString('paymentLinkId', { nullable: true, description: 'The payment link it was made through.' }),
);

builder.queryField('paymentLink', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentLinkRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.paymentLinks.get(principal, args.id),
  }),
);

const CreatePaymentLinkInput = inputTypeFor('CreatePaymentLinkInput', createPaymentLinkInput, {
  fields: (t) => ({
    currency: t.string({ required: true }),
    amount: t.int({ description: 'A fixed amount in minor units; or leave it out and give minAmount and maxAmount.' }),
    minAmount: t.int({ description: 'The least the customer may choose.' }),
    maxAmount: t.int({ description: 'The most the customer may choose.' }),
    description: t.string(),
    expiresInSeconds: t.int({ description: '60 to 2592000 (30 days); 86400 by default.' }),
    profileId: t.string(),
  }),
});

builder.mutationField('createPaymentLink', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentLinkRef,
    description:
      'A reusable payment page URL for an amount (or a customer-chosen amount within bounds) until it expires. Each use (POST /payment-links/{id}/payments) creates its own payment.',
    args: { input: t.arg({ type: CreatePaymentLinkInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.paymentLinks.create(principal, input),
  }),
);

const DeactivatePaymentLinkInput = builder.inputType('DeactivatePaymentLinkInput', {
  fields: (t) => ({ paymentLinkId: t.string({ required: true }) }),
});

builder.mutationField('deactivatePaymentLink', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: PaymentLinkRef,
    description:
      'Stops a payment link for good: its page says it is no longer active and each use is refused (410, INVALID_STATE with status INACTIVE). Payments already made through it are unchanged; deactivating again changes nothing.',
    args: { input: t.arg({ type: DeactivatePaymentLinkInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.paymentLinks.deactivate(principal, input.paymentLinkId),
  }),
);
