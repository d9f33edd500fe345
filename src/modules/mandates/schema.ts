import { MANDATE_STATUSES } from './machine.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { mandateIdInput } from './inputs.ts';

export const MandateStatusEnum = builder.enumType('MandateStatus', {
  values: MANDATE_STATUSES,
  description: 'ACTIVE: merchant-initiated payments may charge it; REVOKED: never again.',
});

export const MandateRef = builder.prismaObject('Mandate', {
  description: 'A customer’s permission to be charged off session with a saved card (createPayment with mandateId).',
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.expose('status', { type: MandateStatusEnum }),
    customerId: t.exposeString('customerId'),
    paymentId: t.exposeString('paymentId', { description: 'The payment that set it up.' }),
    paymentMethod: t.relation('savedPaymentMethod', { description: 'The saved card it charges.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    revokedBy: t.exposeString('revokedBy', { nullable: true, description: 'The API key id that revoked it, or "processor" for the customer’s bank.' }),
    version: t.exposeInt('version'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updated: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectFields('PaymentIntent', (t) => ({
  mandateId: t.exposeString('mandateId', { nullable: true, description: 'The mandate a merchant-initiated payment charged.' }),
  createdMandate: t.field({
    type: MandateRef,
    nullable: true,
    description: 'The mandate this payment set up (setupFutureUsage OFF_SESSION, once paid); null for a publishable key.',
    resolve: (payment, _args, { principal, services }) => (principal.kind === 'secretKey' ? services.mandates.ofPayment(payment.id) : null),
  }),
}));

builder.queryField('mandate', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: MandateRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.mandates.get(principal, args.id),
  }),
);

builder.queryField('mandates', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [MandateRef],
    description: 'A customer’s mandates, newest first.',
    args: { customerId: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.mandates.list(principal, args.customerId),
  }),
);

const RevokeMandateInput = inputTypeFor('RevokeMandateInput', mandateIdInput, { fields: (t) => ({ mandateId: t.string({ required: true }) }) });

builder.mutationField('revokeMandate', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: MandateRef,
    description: 'Revokes a mandate for good (`mandate_revoked`): no payment can charge it afterwards.',
    args: { input: t.arg({ type: RevokeMandateInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.mandates.revoke(principal, input),
  }),
);
