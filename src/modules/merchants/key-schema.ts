import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createApiKeyInput, MAX_API_KEY_LIFETIME_DAYS, rotateApiKeyInput } from './inputs.ts';
import { ModeEnum } from '../../platform/graphql/scalars.ts';

export const ApiKeyTypeEnum = builder.enumType('ApiKeyType', { values: ['SECRET', 'PUBLISHABLE'] as const });

export const ApiKeyRef = builder.prismaObject('ApiKey', {
  description: 'An API key. The key itself is shown once, when issued; afterwards only `redacted`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    type: t.expose('type', { type: ApiKeyTypeEnum }),
    mode: t.expose('mode', { type: ModeEnum }),
    redacted: t.exposeString('redacted', { description: 'A recognisable, non-secret form: "sk_test_…a1b2".' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the key stops working (requests then fail with UNAUTHENTICATED and its subscriptions end); null: never.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const IssuedApiKey = builder.simpleObject('CreateApiKeyPayload', {
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyRef }),
    key: t.string({ description: 'The key itself. Store it now: it is never shown again.' }),
  }),
});

const CreateApiKeyInput = inputTypeFor('CreateApiKeyInput', createApiKeyInput, {
  fields: (t) => ({
    name: t.string({ required: true }),
    type: t.field({ type: ApiKeyTypeEnum, required: true }),
    mode: t.field({ type: ModeEnum, description: "Defaults to the calling key's mode; only the admin key may choose LIVE for a test merchant." }),
    merchantId: t.string({ description: 'Required with the admin key; with a secret key, its own merchant.' }),
    expiresAt: t.field({
      type: 'DateTime',
      description: `When the key stops working: in the future, at most ${MAX_API_KEY_LIFETIME_DAYS} days ahead; never when omitted.`,
    }),
  }),
});

builder.mutationField('createApiKey', (t) =>
  t.withAuth({ $any: { secretKey: true, admin: true } }).field({
    type: IssuedApiKey,
    description: 'Issues a secret or publishable key (secret key: same merchant and mode; admin key: any).',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.apiKeys.create(principal, input),
  }),
);

const RevokeApiKeyInput = builder.inputType('RevokeApiKeyInput', {
  fields: (t) => ({ keyId: t.string({ required: true }) }),
});

const RevokeApiKeyPayload = builder.simpleObject('RevokeApiKeyPayload', {
  fields: (t) => ({ apiKey: t.field({ type: ApiKeyRef }) }),
});

builder.mutationField('revokeApiKey', (t) =>
  t.withAuth({ $any: { secretKey: true, admin: true } }).field({
    type: RevokeApiKeyPayload,
    description: 'Revokes a key at once; requests with it then fail with UNAUTHENTICATED.',
    args: { input: t.arg({ type: RevokeApiKeyInput, required: true }) },
    resolve: async (_root, { input }, { principal, services }) => ({ apiKey: await services.apiKeys.revoke(principal, input.keyId) }),
  }),
);

const RotateApiKeyInput = inputTypeFor('RotateApiKeyInput', rotateApiKeyInput, {
  fields: (t) => ({
    keyId: t.string({ required: true }),
    expiresInSeconds: t.int({
      required: true,
      description: 'How long the old key keeps working: 0 (revoked now) to 2592000 (30 days); never longer than it already would.',
    }),
  }),
});

const RotateApiKeyPayload = builder.simpleObject('RotateApiKeyPayload', {
  fields: (t) => ({
    apiKey: t.field({ type: ApiKeyRef, description: 'The new key: same merchant, type, mode and name.' }),
    key: t.string({ description: 'The new key itself. Store it now: it is never shown again.' }),
    previousApiKey: t.field({ type: ApiKeyRef, description: 'The old key, with its new expiresAt (and revokedAt when expiresInSeconds was 0).' }),
  }),
});

builder.mutationField('rotateApiKey', (t) =>
  t.withAuth({ $any: { secretKey: true, admin: true } }).field({
    type: RotateApiKeyPayload,
    description: 'Issues a successor of a key and lets the old one work for expiresInSeconds more, so its users can switch without downtime.',
    args: { input: t.arg({ type: RotateApiKeyInput, required: true }) },
    resolve: async (_root, { input }, { principal, services }) => {
      const rotated = await services.apiKeys.rotate(principal, input);
      return { apiKey: rotated.apiKey, key: rotated.key, previousApiKey: rotated.previous };
    },
  }),
);
