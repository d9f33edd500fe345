import type { BusinessProfile } from '../../generated/prisma/client.ts';
import type { Principal } from '../../kernel/principal.ts';
import { profileSettings } from './profile-settings.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { createProfileInput, MAX_SIGNING_KEY_OVERLAP_SECONDS, rotateWebhookSigningKeyInput, updateProfileInput } from './inputs.ts';
import { DEFAULT_SIGNING_KEY_OVERLAP_SECONDS } from './profile-service.ts';
import { sealedSigningKeys } from './profile-settings.ts';
import { PaymentMethodTypeEnum } from '../payments/methods-schema.ts';
import { ModeEnum } from '../../platform/graphql/scalars.ts';

const SurchargeRuleRef = builder.simpleObject('SurchargeRule', {
  description: 'What a payment paid with one method type gets added at confirm: fixedAmount plus percentBps of its amount (rounded half up).',
  fields: (t) => ({
    paymentMethodType: t.field({ type: PaymentMethodTypeEnum }),
    fixedAmount: t.int({ description: 'Minor units of the payment’s currency.' }),
    percentBps: t.int({ description: 'Hundredths of a percent (150 = 1.5 %).' }),
  }),
});

const SurchargeRuleInput = builder.inputType('SurchargeRuleInput', {
  fields: (t) => ({
    paymentMethodType: t.field({ type: PaymentMethodTypeEnum, required: true }),
    fixedAmount: t.int({ description: '0 to 1000000 minor units (0 by default).' }),
    percentBps: t.int({ description: '0 to 2000 basis points, 20 % (0 by default).' }),
  }),
});

/** The settings of the calling key's mode (the admin key, which has none, sees the test ones). */
const settingsFor = (profile: BusinessProfile, principal: Principal) => profileSettings(profile, 'mode' in principal ? principal.mode : 'TEST');

/** A setting field's description, which says whose mode it shows. */
const settingDescription = (what: string) => `${what} The calling key’s mode’s value; the admin key, which has no mode, sees test mode’s.`;

export const BusinessProfileRef = builder.prismaObject('BusinessProfile', {
  description:
    'Where webhooks go (one URL per mode), the key that signs them, and how payments are routed and retried. Each setting is kept per mode: these fields show the calling key’s (the admin key, which has no mode, sees test mode’s).',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    isDefault: t.exposeBoolean('isDefault'),
    testWebhookUrl: t.exposeString('testWebhookUrl', { nullable: true }),
    liveWebhookUrl: t.exposeString('liveWebhookUrl', { nullable: true }),
    testWebhookDisabledAt: t.expose('testWebhookDisabledAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Set when the endpoint answered 410 Gone; setting the URL again re-enables it.',
    }),
    liveWebhookDisabledAt: t.expose('liveWebhookDisabledAt', { type: 'DateTime', nullable: true }),
    routing: t.stringList({
      description: settingDescription('Connector names in the order payments try them.'),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).routing,
    }),
    allowPartialAuthorization: t.boolean({
      description: settingDescription('Whether processors may authorize less than the amount of a manually captured payment (PARTIALLY_AUTHORIZED).'),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).allowPartialAuthorization,
    }),
    payoutLimit: t.int({
      nullable: true,
      description: settingDescription('The largest payout allowed, in minor units; null for no limit.'),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).payoutLimit,
    }),
    receiveConnectedMerchantEvents: t.boolean({
      description: settingDescription(
        'A platform’s profile: whether it also receives every event of the platform’s connected merchants, signed with its own key (docs/platforms.md).',
      ),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).receiveConnectedMerchantEvents,
    }),
    surcharges: t.field({
      type: [SurchargeRuleRef],
      description: settingDescription('Surcharges added at confirm, by payment method type (shown to the SDK in paymentMethods).'),
      resolve: (profile, _args, { principal }) =>
        settingsFor(profile, principal).surcharges.map((rule) => ({
          ...rule,
          paymentMethodType: rule.paymentMethodType.toUpperCase() as Uppercase<typeof rule.paymentMethodType>,
        })),
    }),
    sessionExpirySeconds: t.int({
      description: settingDescription('How long a payment may wait for its confirmation before it expires (900 by default).'),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).sessionExpirySeconds,
    }),
    maxRetries: t.int({
      description: settingDescription('Further attempts on the next eligible connectors after a retryable failure.'),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).maxRetries,
    }),
    retryableDeclineCodes: t.stringList({
      description: settingDescription(
        'Decline codes (docs/declines.md) retried on the next connector, such as card_declined; soft declines and processor errors always are, hard declines never.',
      ),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).retryableDeclineCodes,
    }),
    webhookSigningKeyRotatedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: settingDescription('When rotateWebhookSigningKey last replaced the signing key; null if it never did.'),
      resolve: (profile, _args, { principal }) => settingsFor(profile, principal).webhookSigningKeyRotatedAt,
    }),
    previousWebhookSigningKeyExpiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: settingDescription(
        'Until when the key a rotation replaced still signs beside the new one (X-Webhook-Signature-512-Previous, a second webhook-signature); null when only the current key signs.',
      ),
      resolve: (profile, _args, { principal }) => {
        const settings = settingsFor(profile, principal);
        return sealedSigningKeys(settings, new Date()).previous === null ? null : settings.previousPaymentResponseHashKeyExpiresAt;
      },
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

builder.queryField('businessProfiles', (t) =>
  t.withAuth({ secretKey: true }).prismaField({
    type: [BusinessProfileRef],
    resolve: (query, _root, _args, { principal, services }) => services.businessProfiles.list(principal.merchantId, query),
  }),
);

const CreateBusinessProfileInput = inputTypeFor('CreateBusinessProfileInput', createProfileInput, {
  fields: (t) => ({ name: t.string({ required: true }) }),
});

const BusinessProfilePayload = builder.simpleObject('BusinessProfilePayload', {
  fields: (t) => ({
    businessProfile: t.field({ type: BusinessProfileRef }),
    paymentResponseHashKey: t.string({
      nullable: true,
      description:
        'The webhook signing key of the calling key’s mode (a new profile has one per mode), present only when the service generated it in this call: store it now.',
    }),
  }),
});

builder.mutationField('createBusinessProfile', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: BusinessProfilePayload,
    args: { input: t.arg({ type: CreateBusinessProfileInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.businessProfiles.create(principal, input),
  }),
);

const UpdateBusinessProfileInput = inputTypeFor('UpdateBusinessProfileInput', updateProfileInput, {
  fields: (t) => ({
    profileId: t.string({ required: true }),
    name: t.string(),
    mode: t.field({
      type: ModeEnum,
      description: "Which mode's webhook URL and settings to set (the other mode's are untouched); defaults to the key's mode. LIVE needs a live key.",
    }),
    webhookUrl: t.string({ description: 'The URL for `mode`; null or empty clears it. Live URLs must be https and allowlisted.' }),
    paymentResponseHashKey: t.string({ description: 'Your own signing key (32 to 256 printable characters).' }),
    generatePaymentResponseHashKey: t.boolean({ description: 'Generate a new signing key and return it once.' }),
    routing: t.stringList({ description: 'Connector names in the order payments try them (a payment’s own `connectors` come first).' }),
    maxRetries: t.int({ description: '0 to 5 further attempts after a retryable failure (2 by default).' }),
    allowPartialAuthorization: t.boolean({ description: 'Let processors authorize less than the amount of a manually captured payment (false by default).' }),
    receiveConnectedMerchantEvents: t.boolean({
      description:
        'Also receive every event of your connected merchants at this profile’s endpoint, signed with its key (false by default); a platform’s profile only.',
    }),
    surcharges: t.field({ type: [SurchargeRuleInput], description: 'Replaces the surcharge rules: at most one per payment method type; [] removes them.' }),
    payoutLimit: t.int({ description: 'The largest payout allowed, in minor units of its currency (larger ones are NOT_PERMITTED); null removes the limit.' }),
    sessionExpirySeconds: t.int({
      description: '60 to 7776000 (90 days): payments not confirmed within it expire (payment_expired). Applies to payments created afterwards.',
    }),
    retryableDeclineCodes: t.stringList({
      description: 'Decline codes (docs/declines.md) worth another connector, such as card_declined; hard declines are refused.',
    }),
  }),
});

builder.mutationField('updateBusinessProfile', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: BusinessProfilePayload,
    args: { input: t.arg({ type: UpdateBusinessProfileInput, required: true }) },
    resolve: async (_root, { input }, { principal, services }) => {
      const surcharges = input.surcharges?.map((rule) => ({ ...rule, paymentMethodType: rule.paymentMethodType.toLowerCase() }));
      const updated = await services.businessProfiles.update(principal, { ...input, surcharges });
      return { businessProfile: updated.businessProfile, paymentResponseHashKey: updated.generatedPaymentResponseHashKey };
    },
  }),
);

const RotateWebhookSigningKeyInput = inputTypeFor('RotateWebhookSigningKeyInput', rotateWebhookSigningKeyInput, {
  fields: (t) => ({
    profileId: t.string({ required: true }),
    mode: t.field({ type: ModeEnum, description: "Which mode's key to rotate; defaults to the key's mode. LIVE needs a live key." }),
    overlapSeconds: t.int({
      description: `How long the old key keeps signing beside the new one: 0 (replaced at once) to ${MAX_SIGNING_KEY_OVERLAP_SECONDS} (7 days); ${DEFAULT_SIGNING_KEY_OVERLAP_SECONDS} (24 h) by default.`,
    }),
  }),
});

const RotateWebhookSigningKeyPayload = builder.simpleObject('RotateWebhookSigningKeyPayload', {
  fields: (t) => ({
    businessProfile: t.field({ type: BusinessProfileRef }),
    mode: t.field({ type: ModeEnum, description: 'The mode whose key was rotated.' }),
    paymentResponseHashKey: t.string({ description: 'The new signing key of `mode`. Store it now: it is never shown again.' }),
  }),
});

builder.mutationField('rotateWebhookSigningKey', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RotateWebhookSigningKeyPayload,
    description:
      'Replaces a mode’s webhook signing key; during the overlap deliveries are signed with both keys, so receivers can switch without rejecting any (docs/webhooks.md).',
    args: { input: t.arg({ type: RotateWebhookSigningKeyInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.businessProfiles.rotateSigningKey(principal, input),
  }),
);
