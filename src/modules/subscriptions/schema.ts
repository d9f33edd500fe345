// Subscriptions (recurring charges of a mandate). The GraphQL type is RecurringSubscription: `Subscription`
// is GraphQL's own root type for live updates.
import { INTERVAL_UNITS, SUBSCRIPTION_STATUSES } from './machine.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createSubscriptionInput, subscriptionIdInput } from './inputs.ts';

const SubscriptionStatusEnum = builder.enumType('SubscriptionStatus', {
  values: SUBSCRIPTION_STATUSES,
  description: 'ACTIVE: each period is charged (invoice_paid); PAST_DUE: a charge failed and nothing more is charged; CANCELLED: for good.',
});
const IntervalUnitEnum = builder.enumType('IntervalUnit', { values: INTERVAL_UNITS });

export const RecurringSubscriptionRef = builder.prismaObject('Subscription', {
  name: 'RecurringSubscription',
  description: 'A customer’s mandate charged a price every period by the worker.',
  fields: (t) => ({
    id: t.exposeID('id'),
    status: t.expose('status', { type: SubscriptionStatusEnum }),
    customerId: t.exposeString('customerId'),
    mandateId: t.exposeString('mandateId'),
    amount: t.exposeInt('amount'),
    currency: t.exposeString('currency'),
    interval: t.expose('intervalUnit', { type: IntervalUnitEnum }),
    intervalCount: t.exposeInt('intervalCount'),
    paidPeriods: t.exposeInt('paidPeriods', { description: 'Periods paid so far (each sent an invoice_paid webhook).' }),
    nextChargeAt: t.expose('nextChargeAt', { type: 'DateTime' }),
    lastPaymentId: t.exposeString('lastPaymentId', { nullable: true }),
    errorCode: t.exposeString('errorCode', { nullable: true, description: 'Why it is PAST_DUE.' }),
    errorMessage: t.exposeString('errorMessage', { nullable: true }),
    version: t.exposeInt('version'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updated: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.queryField('subscription', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RecurringSubscriptionRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.subscriptions.get(principal, args.id),
  }),
);

builder.queryField('subscriptions', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [RecurringSubscriptionRef],
    description: 'A customer’s subscriptions, newest first.',
    args: { customerId: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.subscriptions.list(principal, args.customerId),
  }),
);

const CreateSubscriptionInput = inputTypeFor('CreateSubscriptionInput', createSubscriptionInput, {
  fields: (t) => ({
    customerId: t.string({ required: true }),
    mandateId: t.string({ required: true, description: 'An ACTIVE mandate of the customer.' }),
    amount: t.int({ required: true, description: 'Charged every period, in minor units.' }),
    currency: t.string({ required: true }),
    interval: t.field({ type: IntervalUnitEnum, required: true }),
    intervalCount: t.int({ description: '1 to 12 intervals per period (1 by default).' }),
    startAt: t.field({ type: 'DateTime', description: 'When the first period is charged (now by default).' }),
  }),
});

builder.mutationField('createSubscription', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RecurringSubscriptionRef,
    description: 'Charges the customer’s mandate `amount` every period, from `startAt`; each paid period sends invoice_paid (subscription_details).',
    args: { input: t.arg({ type: CreateSubscriptionInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.subscriptions.create(principal, input),
  }),
);

const CancelSubscriptionInput = inputTypeFor('CancelSubscriptionInput', subscriptionIdInput, {
  fields: (t) => ({ subscriptionId: t.string({ required: true }) }),
});

builder.mutationField('cancelSubscription', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RecurringSubscriptionRef,
    description: 'Stops a subscription for good: no further period is charged.',
    args: { input: t.arg({ type: CancelSubscriptionInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.subscriptions.cancel(principal, input),
  }),
);
