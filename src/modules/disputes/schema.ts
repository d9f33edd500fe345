import { DISPUTE_STATUSES } from './machine.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { challengeDisputeInput, disputeIdInput } from './inputs.ts';

export const DisputeStatusEnum = builder.enumType('DisputeStatus', {
  values: DISPUTE_STATUSES,
  description:
    'OPENED until the merchant answers (ACCEPTED, or CHALLENGED with evidence) or the deadline passes (EXPIRED); a challenge is WON or LOST; CANCELLED when withdrawn.',
});

export const DisputeRef = builder.prismaObject('Dispute', {
  description: 'A chargeback the processor reported on a captured payment.',
  fields: (t) => ({
    id: t.exposeID('id'),
    paymentId: t.exposeString('paymentId'),
    attemptId: t.exposeString('attemptId'),
    status: t.expose('status', { type: DisputeStatusEnum }),
    amount: t.exposeInt('amount', { description: 'What the customer’s bank took back, in minor units.' }),
    currency: t.exposeString('currency'),
    reason: t.exposeString('reason', { nullable: true, description: 'The processor’s reason code (fraudulent, product_not_received, …).' }),
    evidenceDueBy: t.expose('evidenceDueBy', { type: 'DateTime', nullable: true, description: 'The deadline for challengeDispute.' }),
    evidence: t.expose('evidence', { type: 'JSON', nullable: true, description: 'What the merchant submitted.' }),
    processorMerchantId: t.exposeString('processorMerchantId', {
      nullable: true,
      description:
        'The merchant whose connector account processed the attempt this dispute concerns when it is not the payment’s merchant (a connected merchant’s platform, docs/platforms.md); null otherwise.',
    }),
    connector: t.exposeString('connectorName'),
    connectorDisputeId: t.exposeString('connectorDisputeId'),
    version: t.exposeInt('version', { description: 'Increases with every change; order updates by it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updated: t.expose('updatedAt', { type: 'DateTime' }),
    payment: t.relation('payment'),
  }),
});

builder.prismaObjectField('PaymentIntent', 'disputes', (t) =>
  t.field({
    type: [DisputeRef],
    nullable: true,
    description: 'The payment’s disputes, oldest first; null for a publishable key.',
    resolve: (payment, _args, { principal, services }) => (principal.kind === 'secretKey' ? services.disputes.ofPayment(payment.id) : null),
  }),
);

builder.queryField('dispute', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: DisputeRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, args, { principal, services }) => services.disputes.get(principal, args.id),
  }),
);

builder.queryField('disputes', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [DisputeRef],
    description: 'The merchant’s disputes in the key’s mode, newest first.',
    args: { paymentId: t.arg.string(), status: t.arg({ type: DisputeStatusEnum }), first: t.arg.int({ description: '1 to 100; 20 by default.' }) },
    resolve: (_root, args, { principal, services }) => services.disputes.list(principal, args),
  }),
);

const AcceptDisputeInput = inputTypeFor('AcceptDisputeInput', disputeIdInput, { fields: (t) => ({ disputeId: t.string({ required: true }) }) });

builder.mutationField('acceptDispute', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: DisputeRef,
    description: 'Concedes an open dispute at the processor: the money stays with the customer (`dispute_accepted`).',
    args: { input: t.arg({ type: AcceptDisputeInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.disputes.accept(principal, input),
  }),
);

const ChallengeDisputeInput = inputTypeFor('ChallengeDisputeInput', challengeDisputeInput, {
  fields: (t) => ({
    disputeId: t.string({ required: true }),
    evidence: t.field({
      type: 'JSON',
      required: true,
      description:
        'Named text fields (1 to 20; names of lowercase letters, digits and _, values up to 5000 characters), e.g. { "receipt": "…", "shipping_tracking_number": "…" }.',
    }),
  }),
});

builder.mutationField('challengeDispute', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: DisputeRef,
    description:
      'Challenges an open dispute with evidence before `evidenceDueBy` (`dispute_challenged`); the network’s decision follows (`dispute_won` or `dispute_lost`).',
    args: { input: t.arg({ type: ChallengeDisputeInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.disputes.challenge(principal, input),
  }),
);
