import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { connectionOf } from '../../platform/graphql/connections.ts';
import { createConnectedMerchantInput, createMerchantInput, setProcessorAccountInput, updateMerchantInput } from './inputs.ts';
import { BusinessProfileRef } from './profile-schema.ts';

const ProcessorAccountRef = builder.simpleObject('ProcessorAccount', {
  description: 'A connected merchant’s own account at a processor, where the platform’s payments pay its share (docs/platforms.md).',
  fields: (t) => ({
    connector: t.string({ description: 'stripe or adyen.' }),
    accountId: t.string({ description: 'Its Stripe Connect account (acct_…) or Adyen balance account (BA…).' }),
  }),
});

export const MerchantAccountRef = builder.prismaObject('MerchantAccount', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    liveWebhookHosts: t.exposeStringList('liveWebhookHosts', {
      description: 'Hosts a live webhook URL may use (*.domain for subdomains); the operator sets them.',
    }),
    isPlatform: t.exposeBoolean('isPlatform', { description: 'A platform creates connected merchants and acts for them (docs/platforms.md).' }),
    platformMerchantId: t.exposeString('platformMerchantId', { nullable: true, description: 'The platform this merchant is connected to, if any.' }),
    processorAccounts: t.withAuth({ secretKey: true }).field({
      type: [ProcessorAccountRef],
      nullable: true,
      description:
        'Its accounts at processors in the key’s mode (docs/platforms.md, "Processor accounts"): for its platform’s key and its own; null for any other.',
      resolve: async (merchant, _args, { principal, services }) => {
        const platformId = principal.platformMerchantId ?? principal.merchantId;
        if (merchant.id !== principal.merchantId && merchant.platformMerchantId !== platformId) return null;
        return services.merchantAccounts.processorAccounts(merchant.id, principal.mode);
      },
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    businessProfiles: t.relation('businessProfiles', { query: { orderBy: { createdAt: 'asc' } } }),
    apiKeys: t.relation('apiKeys', {
      description: "The merchant's keys in the calling key's mode (all modes for the admin key).",
      query: (_args, { principal }) => ({
        where: principal.kind === 'secretKey' ? { mode: principal.mode } : {},
        orderBy: { createdAt: 'asc' },
      }),
    }),
  }),
});

builder.queryField('merchant', (t) =>
  t.withAuth({ secretKey: true }).prismaField({
    type: MerchantAccountRef,
    description: 'The merchant of the secret key.',
    resolve: (query, _root, _args, { principal, services }) => services.merchantAccounts.get(principal.merchantId, query),
  }),
);

const CreateMerchantAccountInput = inputTypeFor('CreateMerchantAccountInput', createMerchantInput, {
  fields: (t) => ({
    name: t.string({ required: true }),
    platform: t.boolean({ description: 'Makes a platform, which creates connected merchants and acts for them (docs/platforms.md); false by default.' }),
  }),
});

const CreateMerchantAccountPayload = builder.simpleObject('CreateMerchantAccountPayload', {
  description: 'The new merchant and its first credentials. The keys and the signing key are shown only here.',
  fields: (t) => ({
    merchant: t.field({ type: MerchantAccountRef }),
    businessProfile: t.field({ type: BusinessProfileRef }),
    secretKey: t.string({ description: 'A test secret key (sk_test_…).' }),
    publishableKey: t.string({ description: 'A test publishable key (pk_test_…).' }),
    paymentResponseHashKey: t.string({
      description:
        'The default profile’s test-mode webhook signing key. Its live one is never shown here: a live secret key sets or generates it with updateBusinessProfile.',
    }),
  }),
});

builder.mutationField('createMerchantAccount', (t) =>
  t.withAuth({ admin: true }).field({
    type: CreateMerchantAccountPayload,
    description: 'Creates a merchant with a default business profile and test keys (admin key).',
    args: { input: t.arg({ type: CreateMerchantAccountInput, required: true }) },
    resolve: (_root, { input }, { services }) => services.merchantAccounts.create(input),
  }),
);

const ProcessorAccountInput = builder.inputType('ProcessorAccountInput', {
  fields: (t) => ({
    connector: t.string({ required: true, description: 'stripe or adyen.' }),
    accountId: t.string({ required: true, description: 'A Stripe Connect account id (acct_…) or an Adyen balance account id (BA…).' }),
  }),
});

const CreateConnectedMerchantInput = inputTypeFor('CreateConnectedMerchantInput', createConnectedMerchantInput, {
  fields: (t) => ({
    name: t.string({ required: true }),
    processorAccounts: t.field({
      type: [ProcessorAccountInput],
      description: 'Its accounts at processors, one per connector, in the key’s mode (docs/platforms.md, "Processor accounts").',
    }),
  }),
});

builder.mutationField('createConnectedMerchant', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: MerchantAccountRef,
    description:
      'Creates a merchant connected to the platform of the secret key, with its default business profile and no keys: act for it with X-Connected-Merchant-Id (docs/platforms.md).',
    args: { input: t.arg({ type: CreateConnectedMerchantInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.merchantAccounts.createConnected(principal, input),
  }),
);

const SetConnectedMerchantProcessorAccountInput = inputTypeFor('SetConnectedMerchantProcessorAccountInput', setProcessorAccountInput, {
  fields: (t) => ({
    merchantId: t.string({ required: true, description: 'A merchant connected to the platform of the key.' }),
    connector: t.string({ required: true, description: 'stripe or adyen.' }),
    accountId: t.string({ required: true, description: 'A Stripe Connect account id (acct_…) or an Adyen balance account id (BA…).' }),
  }),
});

builder.mutationField('setConnectedMerchantProcessorAccount', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: MerchantAccountRef,
    description:
      'Sets (or replaces) a connected merchant’s account at a processor, in the key’s mode: the platform’s own secret key only (docs/platforms.md, "Processor accounts").',
    args: { input: t.arg({ type: SetConnectedMerchantProcessorAccountInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.merchantAccounts.setProcessorAccount(principal, input),
  }),
);

const ConnectedMerchantConnection = connectionOf('ConnectedMerchant', MerchantAccountRef);

builder.queryField('connectedMerchants', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: ConnectedMerchantConnection,
    description: 'The merchants connected to the platform of the secret key, newest first.',
    args: { first: t.arg.int({ description: '1 to 100; 20 by default.' }), after: t.arg.string() },
    resolve: (_root, args, { principal, services }) => services.merchantAccounts.listConnected(principal, args),
  }),
);

const UpdateMerchantAccountInput = inputTypeFor('UpdateMerchantAccountInput', updateMerchantInput, {
  fields: (t) => ({
    merchantId: t.string({ required: true }),
    liveWebhookHosts: t.stringList({ description: 'Replaces the live webhook host allowlist.' }),
  }),
});

builder.mutationField('updateMerchantAccount', (t) =>
  t.withAuth({ admin: true }).field({
    type: MerchantAccountRef,
    description: 'Operator settings of a merchant, such as the live webhook allowlist (admin key).',
    args: { input: t.arg({ type: UpdateMerchantAccountInput, required: true }) },
    resolve: (_root, { input }, { services }) => services.merchantAccounts.update(input),
  }),
);
