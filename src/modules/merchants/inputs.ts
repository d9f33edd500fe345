// What the merchants API accepts (accounts, keys, profiles): validated by the services, and the shape of their GraphQL inputs.
import { z } from 'zod';
import { CONNECTORS, isConnectorName, processorAccountProblem } from '../connectors/index.ts';
import { PAYMENT_METHOD_TYPES } from '../payments/methods.ts';
import { HARD_DECLINE_CODES, MAX_RETRIES_LIMIT } from '../payments/machine/retry.ts';
import { surchargeRulesProblem } from '../payments/surcharges.ts';

const hostPattern = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a host name or *.domain');

const merchantName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export const createMerchantInput = z.object({ name: merchantName, platform: z.boolean().nullish() });

/** A connected merchant's account at a processor (docs/platforms.md, "Processor accounts"), of the shape that processor gives. */
const processorAccountFields = z.object({ connector: z.string().max(32), accountId: z.string().trim().max(255, 'must be at most 255 characters') });
const checkProcessorAccount = (account: z.infer<typeof processorAccountFields>, context: z.RefinementCtx) => {
  const problem = processorAccountProblem(account.connector, account.accountId);
  if (problem) context.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
};
const processorAccount = processorAccountFields.superRefine(checkProcessorAccount);

export const createConnectedMerchantInput = z.object({
  name: merchantName,
  processorAccounts: z
    .array(processorAccount)
    .max(Object.keys(CONNECTORS).length, 'at most one per connector')
    .refine((accounts) => new Set(accounts.map((account) => account.connector)).size === accounts.length, 'must not name a connector twice')
    .nullish(),
});

export const setProcessorAccountInput = processorAccountFields.extend({ merchantId: z.string().max(64) }).superRefine(checkProcessorAccount);

export const listConnectedMerchantsInput = z.object({
  first: z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100').nullish(),
  after: z.string().nullish(),
});

export const updateMerchantInput = z.object({
  merchantId: z.string(),
  liveWebhookHosts: z.array(hostPattern).max(50, 'at most 50 hosts').nullish(),
});

const keyName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

/** The longest a key may be issued for (docs/api.md, "API keys"). */
export const MAX_API_KEY_LIFETIME_DAYS = 366;
/** The longest a rotated key keeps working beside its successor. */
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 24 * 3600;

export const createApiKeyInput = z.object({
  name: keyName,
  type: z.enum(['SECRET', 'PUBLISHABLE']),
  mode: z.enum(['TEST', 'LIVE']).nullish(),
  merchantId: z.string().nullish(),
  expiresAt: z
    .date()
    .refine((date) => date.getTime() > Date.now(), 'must be in the future')
    .refine((date) => date.getTime() <= Date.now() + MAX_API_KEY_LIFETIME_DAYS * 24 * 3600 * 1000, `must be at most ${MAX_API_KEY_LIFETIME_DAYS} days from now`)
    .nullish(),
});

export const rotateApiKeyInput = z.object({
  keyId: z.string().max(64),
  expiresInSeconds: z
    .number()
    .int('must be a whole number of seconds')
    .min(0, 'must be at least 0 (0 revokes the old key now)')
    .max(MAX_ROTATION_OVERLAP_SECONDS, `must be at most ${MAX_ROTATION_OVERLAP_SECONDS} (30 days)`),
});

const profileName = z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters');

export const createProfileInput = z.object({ name: profileName });

export const updateProfileInput = z
  .object({
    profileId: z.string(),
    name: profileName.nullish(),
    mode: z.enum(['TEST', 'LIVE']).nullish(),
    webhookUrl: z.string().trim().nullish(),
    paymentResponseHashKey: z
      .string()
      .min(32, 'must be at least 32 characters')
      .max(256, 'must be at most 256 characters')
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      .nullish(),
    generatePaymentResponseHashKey: z.boolean().nullish(),
    routing: z
      .array(z.string().refine(isConnectorName, `must be one of: ${Object.keys(CONNECTORS).join(', ')}`))
      .max(10, 'at most 10 connectors')
      .refine((names) => new Set(names).size === names.length, 'must not name a connector twice')
      .nullish(),
    maxRetries: z.number().int('must be an integer').min(0, 'must be at least 0').max(MAX_RETRIES_LIMIT, `must be at most ${MAX_RETRIES_LIMIT}`).nullish(),
    sessionExpirySeconds: z
      .number()
      .int('must be a whole number of seconds')
      .min(60, 'must be 60 seconds to 90 days (7776000)')
      .max(7_776_000, 'must be 60 seconds to 90 days (7776000)')
      .nullish(),
    surcharges: z
      .array(
        z.object({
          paymentMethodType: z.enum(PAYMENT_METHOD_TYPES, `must be one of ${PAYMENT_METHOD_TYPES.join(', ')}`),
          fixedAmount: z
            .number()
            .nullish()
            .transform((value) => value ?? 0),
          percentBps: z
            .number()
            .nullish()
            .transform((value) => value ?? 0),
        }),
      )
      .max(PAYMENT_METHOD_TYPES.length, `at most one rule per payment method type (${PAYMENT_METHOD_TYPES.length})`)
      .superRefine((rules, context) => {
        const problem = surchargeRulesProblem(rules);
        if (problem) context.addIssue({ code: 'custom', path: problem.field.split('.').slice(1), message: problem.rule });
      })
      .nullish(),
    allowPartialAuthorization: z.boolean().nullish(),
    receiveConnectedMerchantEvents: z.boolean().nullish(),
    payoutLimit: z.number().int('must be a whole number of minor units').min(1, 'must be at least 1').max(2_147_483_647, 'must fit in 32 bits').nullish(),
    retryableDeclineCodes: z
      .array(
        z
          .string()
          .regex(/^[a-z0-9_]{1,64}$/, 'must be a decline code (lower case letters, digits, underscores)')
          .refine((code) => !HARD_DECLINE_CODES.has(code), 'is a hard decline, which is never retried'),
      )
      .max(50, 'at most 50 codes')
      .nullish(),
  })
  .refine((input) => !(input.paymentResponseHashKey && input.generatePaymentResponseHashKey), {
    path: ['generatePaymentResponseHashKey'],
    message: 'cannot be combined with paymentResponseHashKey',
  });

/** The longest a replaced webhook signing key keeps signing beside the new one (docs/webhooks.md). */
export const MAX_SIGNING_KEY_OVERLAP_SECONDS = 7 * 24 * 3600;

export const rotateWebhookSigningKeyInput = z.object({
  profileId: z.string().max(64),
  mode: z.enum(['TEST', 'LIVE']).nullish(),
  overlapSeconds: z
    .number()
    .int('must be a whole number of seconds')
    .min(0, 'must be at least 0 (0 replaces the key at once)')
    .max(MAX_SIGNING_KEY_OVERLAP_SECONDS, `must be at most ${MAX_SIGNING_KEY_OVERLAP_SECONDS} (7 days)`)
    .nullish(),
});
