import { CONNECTORS, isConnectorName } from './registry.ts';
import { UNVERIFIED_SAMPLE_PER_MINUTE } from './callbacks.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createConnectorAccountInput, updateConnectorAccountInput } from './inputs.ts';
import { ModeEnum } from '../../platform/graphql/scalars.ts';

export const ConnectorAccountRef = builder.prismaObject('ConnectorAccount', {
  description: "A merchant's account at a processor. Credentials and the webhook secret are never returned.",
  fields: (t) => ({
    id: t.exposeID('id'),
    connectorName: t.exposeString('connectorName'),
    mode: t.expose('mode', { type: ModeEnum }),
    paymentMethods: t.exposeStringList('paymentMethods'),
    currencies: t.exposeStringList('currencies', { description: 'Accepted currencies; empty accepts all.' }),
    countries: t.exposeStringList('countries', { description: 'Accepted customer countries; empty accepts all.' }),
    disabled: t.exposeBoolean('disabled'),
    hasWebhookSecret: t.boolean({
      description: 'Whether callbacks can be verified (a secret was given, or generated at registration).',
      resolve: (account) => account.webhookSecretEncrypted !== null,
    }),
    webhookUrl: t.exposeString('webhookUrl', {
      nullable: true,
      description: 'Where the processor was told to send callbacks (POST /account/{account_id}/webhooks/{id}).',
    }),
    webhookRegisteredAt: t.expose('webhookRegisteredAt', { type: 'DateTime', nullable: true }),
    webhookFlowCategories: t.stringList({
      description:
        'The flow categories the connector declares for its callbacks. Informational only: callbacks are processed whatever it says, even when empty.',
      resolve: (account) => (isConnectorName(account.connectorName) ? [...CONNECTORS[account.connectorName].webhookFlowCategories] : []),
    }),
    callbacks: t.relation('callbacks', {
      description: `The processor’s callbacks to this account, newest first, with what was done (support and replay). Of those that did not verify, at most ${UNVERIFIED_SAMPLE_PER_MINUTE} a minute are kept.`,
      args: { first: t.arg.int({ description: '1 to 100; 20 by default.' }) },
      query: ({ first }) => ({ orderBy: { receivedAt: 'desc' }, take: Math.min(Math.max(first ?? 20, 1), 100) }),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('ConnectorCallback', {
  description: 'A callback as it arrived (credentials removed from its headers), what verification said, and what was done.',
  fields: (t) => ({
    id: t.exposeID('id'),
    verification: t.exposeString('verification', { description: 'VERIFIED, FAILED or NOT_IMPLEMENTED.' }),
    outcome: t.exposeString('outcome', {
      description:
        'applied, duplicate_or_stale, payment_not_found, unrecognised_event, other_merchant_account, mode_mismatch, dispute_currency_mismatch, dispute_amount_over_captured, dispute_awaiting_capture, deferred, signature_mismatch, no_webhook_secret or webhooks_not_implemented. A callback of several events (Adyen batches them) has a row per event.',
    }),
    processorEventId: t.exposeString('processorEventId', { nullable: true }),
    processorEventType: t.exposeString('processorEventType', { nullable: true }),
    paymentId: t.exposeString('paymentId', { nullable: true }),
    headers: t.expose('headers', {
      type: 'JSON',
      description: 'Without credentials; of a callback that did not verify, only content-type, content-length and user-agent.',
    }),
    bodyBase64: t.string({
      description: 'The exact bytes received, base64; empty for a callback that did not verify (its body is not kept).',
      resolve: (callback) => Buffer.from(callback.body).toString('base64'),
    }),
    receivedAt: t.expose('receivedAt', { type: 'DateTime' }),
  }),
});

builder.queryField('connectorAccounts', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [ConnectorAccountRef],
    description: "The merchant's connector accounts in the key's mode.",
    resolve: (_root, _args, { principal, services }) => services.connectorAccounts.list(principal),
  }),
);

const CreateConnectorAccountInput = inputTypeFor('CreateConnectorAccountInput', createConnectorAccountInput, {
  fields: (t) => ({
    connectorName: t.string({ required: true, description: `One of: ${Object.keys(CONNECTORS).join(', ')}.` }),
    credentials: t.field({ type: 'JSON', required: true, description: 'The connector’s credentials, e.g. { "apiKey": "sk_sandbox_…" } for the sandbox.' }),
    webhookSecret: t.string({ description: 'The secret the connector signs its callbacks with.' }),
    paymentMethods: t.stringList({ description: 'Enabled payment method types (card, bank_debit, wallet, ...); defaults to all the connector supports.' }),
    currencies: t.stringList({ description: 'ISO 4217 codes the account accepts; all when omitted.' }),
    countries: t.stringList({ description: 'ISO 3166-1 alpha-2 codes of customers the account accepts; all when omitted.' }),
    mode: t.field({ type: ModeEnum, description: "Defaults to the key's mode (and must equal it)." }),
  }),
});

builder.mutationField('createConnectorAccount', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: ConnectorAccountRef,
    args: { input: t.arg({ type: CreateConnectorAccountInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.connectorAccounts.create(principal, input),
  }),
);

const UpdateConnectorAccountInput = inputTypeFor('UpdateConnectorAccountInput', updateConnectorAccountInput, {
  fields: (t) => ({
    id: t.string({ required: true }),
    disabled: t.boolean({
      required: true,
      description: 'true: payments and payouts are no longer routed to the account (those already on it carry on); false: routed to again.',
    }),
  }),
});

builder.mutationField('updateConnectorAccount', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: ConnectorAccountRef,
    description: "Disables or re-enables one of the merchant's connector accounts of the key's mode (NOT_FOUND for any other).",
    args: { input: t.arg({ type: UpdateConnectorAccountInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.connectorAccounts.update(principal, input),
  }),
);
