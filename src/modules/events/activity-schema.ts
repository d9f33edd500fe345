// What a dashboard charts: payments by status and webhook delivery attempts over a recent window.
import { builder } from '../../platform/graphql/builder.ts';
import { PaymentStatusEnum } from '../payments/schema.ts';

const StatusCount = builder.simpleObject('PaymentStatusCount', {
  fields: (t) => ({ status: t.field({ type: PaymentStatusEnum }), count: t.int() }),
});

const DeliveryAttemptCounts = builder.simpleObject('DeliveryAttemptCounts', {
  description: 'Webhook delivery attempts made in the window; `succeeded` got a 2xx.',
  fields: (t) => ({ total: t.int(), succeeded: t.int() }),
});

const Activity = builder.simpleObject('Activity', {
  fields: (t) => ({
    since: t.field({ type: 'DateTime' }),
    paymentsByStatus: t.field({ type: [StatusCount], description: 'Payments created in the window, by their status now; every status, zeros included.' }),
    deliveryAttempts: t.field({ type: DeliveryAttemptCounts }),
  }),
});

builder.queryField('activity', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: Activity,
    description: 'The merchant’s recent activity in the key’s mode, for dashboards: since the last hour by default, at most 30 days back.',
    args: { since: t.arg({ type: 'DateTime' }), profileId: t.arg.string() },
    resolve: (_root, args, { principal, services }) => services.activity.summary(principal, args),
  }),
);
