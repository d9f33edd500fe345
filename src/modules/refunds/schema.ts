import { REFUND_STATUSES } from './machine.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createRefundInput } from './inputs.ts';

export const RefundStatusEnum = builder.enumType('RefundStatus', {
  values: REFUND_STATUSES,
  description: 'PENDING until the processor decides; REVIEW while the processor holds it; SUCCEEDED or FAILED (a failed refund gives its amount back).',
});

export const RefundRef = builder.prismaObject('Refund', {
  description: 'Money returned to the customer from a payment’s captured amount.',
  fields: (t) => ({
    id: t.exposeID('id'),
    paymentId: t.exposeString('paymentId'),
    status: t.expose('status', { type: RefundStatusEnum }),
    amount: t.exposeInt('amount', { description: 'In minor units of the payment’s currency.' }),
    currency: t.exposeString('currency'),
    reason: t.exposeString('reason', { nullable: true }),
    attemptId: t.exposeString('attemptId', { description: 'The payment attempt whose capture is refunded.' }),
    processorMerchantId: t.exposeString('processorMerchantId', {
      nullable: true,
      description:
        'The merchant whose connector account processed the attempt this refund concerns when it is not the payment’s merchant (a connected merchant’s platform, docs/platforms.md); null otherwise.',
    }),
    connector: t.exposeString('connectorName'),
    connectorRefundId: t.exposeString('connectorRefundId', { nullable: true }),
    errorCode: t.exposeString('errorCode', { nullable: true }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    syncExhaustedAt: t.expose('syncExhaustedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Set when the scheduled syncs ran out while the processor had not decided: look at it.',
    }),
    version: t.exposeInt('version', { description: 'Increases with every change; order updates by it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updated: t.expose('updatedAt', { type: 'DateTime' }),
    payment: t.relation('payment'),
  }),
});

builder.prismaObjectFields('PaymentIntent', (t) => ({
  amountRefunded: t.exposeInt('amountRefunded', {
    description: 'What refunds hold of amountReceived: pending, in review and succeeded ones (a failed refund gives its amount back).',
  }),
  refunds: t.field({
    type: [RefundRef],
    nullable: true,
    description: 'The payment’s refunds, oldest first; null for a publishable key.',
    resolve: (payment, _args, { principal, services }) => (principal.kind === 'secretKey' ? services.refunds.ofPayment(payment.id) : null),
  }),
}));

builder.queryField('refund', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RefundRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.refunds.get(principal, args.id),
  }),
);

builder.queryField('refunds', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [RefundRef],
    description: 'A payment’s refunds, oldest first.',
    args: { paymentId: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.refunds.listForPayment(principal, args.paymentId),
  }),
);

const CreateRefundInput = inputTypeFor('CreateRefundInput', createRefundInput, {
  fields: (t) => ({
    paymentId: t.string({ required: true }),
    amount: t.int({ description: 'In minor units; all that is not yet refunded when omitted.' }),
    reason: t.string({ description: 'Up to 255 characters, passed to the processor.' }),
  }),
});

builder.mutationField('createRefund', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RefundRef,
    description:
      'Refunds all or part of a captured payment (several partial refunds may follow one another; together never more than was captured). Answers the refund as the processor left it: PENDING while it decides, then a `refund_*` webhook.',
    args: { input: t.arg({ type: CreateRefundInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.refunds.create(principal, input),
  }),
);

const SyncRefundInput = builder.inputType('SyncRefundInput', { fields: (t) => ({ refundId: t.string({ required: true }) }) });

builder.mutationField('syncRefund', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RefundRef,
    description: 'Asks the processor for the refund’s current state (pending refunds are also synced on a schedule).',
    args: { input: t.arg({ type: SyncRefundInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.refunds.sync(principal, input.refundId),
  }),
);
