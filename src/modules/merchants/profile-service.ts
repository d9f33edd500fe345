// Business profiles: where a merchant's webhooks go, the key that signs them, and how payments are routed
// (connector order) and retried (how often, after which declines); each of them kept per mode.
import { randomBytes } from 'node:crypto';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import { webhookUrlProblem } from '../../kernel/webhook-url.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import type { BusinessProfile, Prisma } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { newProfileSettings, profileSettings, profileSettingsUpdate } from './profile-settings.ts';
import type { MerchantPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createProfileInput, rotateWebhookSigningKeyInput, updateProfileInput } from './inputs.ts';

/** 64 hex characters (256 bits), the signing key of outgoing webhooks. */
export function generatePaymentResponseHashKey(): string {
  return randomBytes(32).toString('hex');
}

/** A new profile's signing keys, one generated for each mode: knowing the test one tells nothing of the live one. */
export function newSigningKeys(): Record<Mode, string> {
  return { TEST: generatePaymentResponseHashKey(), LIVE: generatePaymentResponseHashKey() };
}

export interface UpdatedProfile {
  businessProfile: BusinessProfile;
  /** Set only when the service generated a new key: shown this once. */
  generatedPaymentResponseHashKey: string | null;
}

export class BusinessProfileService {
  constructor(private readonly context: ServiceContext) {}

  async list<Query extends Omit<Prisma.BusinessProfileFindManyArgs, 'where' | 'orderBy'>>(merchantId: string, query?: Query) {
    return this.context.db.businessProfile.findMany({ ...query, where: { merchantId }, orderBy: { createdAt: 'asc' } });
  }

  async get(principal: MerchantPrincipal, profileId: string): Promise<BusinessProfile> {
    const profile = await this.context.db.businessProfile.findUnique({ where: { id: profileId } });
    if (profile === null || profile.merchantId !== principal.merchantId) throw notFound('business profile', profileId);
    return profile;
  }

  /** Answers the signing key of the caller's mode only: a live key learns the live one by generating a new one. */
  async create(principal: MerchantPrincipal, rawInput: unknown): Promise<{ businessProfile: BusinessProfile; paymentResponseHashKey: string }> {
    const input = parseInput(createProfileInput, rawInput);
    const signingKeys = newSigningKeys();
    await this.assertNameFree(principal.merchantId, input.name);
    const businessProfile = await this.context.db.businessProfile.create({
      data: {
        id: newId('businessProfile'),
        merchantId: principal.merchantId,
        name: input.name,
        ...newProfileSettings(this.context.secretBox, signingKeys),
      },
    });
    await this.context.cache.invalidate([profilesTag(principal.merchantId)]);
    return { businessProfile, paymentResponseHashKey: signingKeys[principal.mode] };
  }

  /** Sets the name, and the webhook URL and settings of one mode only: the key's, unless `mode` says otherwise. */
  async update(principal: MerchantPrincipal, rawInput: unknown): Promise<UpdatedProfile> {
    const input = parseInput(updateProfileInput, rawInput);
    const profile = await this.get(principal, input.profileId);
    const mode = modeToChange(principal, input.mode);
    let generatedPaymentResponseHashKey: string | null = null;
    if (input.generatePaymentResponseHashKey) generatedPaymentResponseHashKey = generatePaymentResponseHashKey();
    const newKey = input.paymentResponseHashKey ?? generatedPaymentResponseHashKey;
    const data = profileSettingsUpdate(mode, {
      paymentResponseHashKeyEncrypted: newKey === null ? undefined : this.context.secretBox.seal(newKey),
      // A key set here replaces the old one at once, ending any rotation's overlap (docs/webhooks.md).
      ...(newKey === null ? {} : { previousPaymentResponseHashKeyEncrypted: null, previousPaymentResponseHashKeyExpiresAt: null }),
      routing: input.routing ?? undefined,
      maxRetries: input.maxRetries ?? undefined,
      sessionExpirySeconds: input.sessionExpirySeconds ?? undefined,
      // null removes the limit.
      payoutLimit: input.payoutLimit,
      allowPartialAuthorization: input.allowPartialAuthorization ?? undefined,
      receiveConnectedMerchantEvents: input.receiveConnectedMerchantEvents ?? undefined,
      surcharges: input.surcharges ?? undefined,
      retryableDeclineCodes: input.retryableDeclineCodes ?? undefined,
    });
    if (input.name != null) data.name = input.name;
    const merchant = () => this.context.db.merchantAccount.findUniqueOrThrow({ where: { id: principal.merchantId } });
    // Only a platform has connected merchants whose events it could receive (docs/platforms.md).
    if (input.receiveConnectedMerchantEvents && !(await merchant()).isPlatform) {
      throw invalidInput('receiveConnectedMerchantEvents', 'can be turned on only for a platform’s business profile');
    }
    if (input.webhookUrl !== undefined) {
      const url = input.webhookUrl === null || input.webhookUrl === '' ? null : input.webhookUrl;
      if (url !== null) {
        const problem = webhookUrlProblem(url, mode, (await merchant()).liveWebhookHosts);
        if (problem !== null) throw invalidInput('webhookUrl', problem);
      }
      data[mode === 'LIVE' ? 'liveWebhookUrl' : 'testWebhookUrl'] = url;
      // Setting the URL again is how an endpoint disabled by a 410 Gone comes back.
      data[mode === 'LIVE' ? 'liveWebhookDisabledAt' : 'testWebhookDisabledAt'] = null;
    }
    if (input.name != null && input.name !== profile.name) await this.assertNameFree(principal.merchantId, input.name);
    const businessProfile = await this.context.db.businessProfile.update({ where: { id: profile.id }, data });
    await this.context.cache.invalidate([profilesTag(principal.merchantId)]);
    return { businessProfile, generatedPaymentResponseHashKey };
  }

  /**
   * A new signing key for one mode's webhooks, answered once; the replaced key keeps signing beside it for
   * `overlapSeconds` (24 h by default, 0 ends it at once) so receivers can switch without rejecting a delivery
   * (docs/webhooks.md, "Rotating the signing key"). A key replaced by an earlier rotation stops signing now. Guarded
   * on the key it read, so two concurrent rotations cannot both keep "the old key" and lose the first's new one.
   */
  async rotateSigningKey(
    principal: MerchantPrincipal,
    rawInput: unknown,
  ): Promise<{ businessProfile: BusinessProfile; paymentResponseHashKey: string; mode: Mode }> {
    const input = parseInput(rotateWebhookSigningKeyInput, rawInput);
    const mode = modeToChange(principal, input.mode);
    const profile = await this.get(principal, input.profileId);
    const overlapSeconds = input.overlapSeconds ?? DEFAULT_SIGNING_KEY_OVERLAP_SECONDS;
    const current = profileSettings(profile, mode).paymentResponseHashKeyEncrypted;
    const now = new Date();
    const key = generatePaymentResponseHashKey();
    const data = profileSettingsUpdate(mode, {
      paymentResponseHashKeyEncrypted: this.context.secretBox.seal(key),
      previousPaymentResponseHashKeyEncrypted: overlapSeconds === 0 ? null : current,
      previousPaymentResponseHashKeyExpiresAt: overlapSeconds === 0 ? null : new Date(now.getTime() + overlapSeconds * 1000),
      webhookSigningKeyRotatedAt: now,
    });
    const column = mode === 'LIVE' ? 'livePaymentResponseHashKeyEncrypted' : 'testPaymentResponseHashKeyEncrypted';
    const [businessProfile] = await this.context.db.businessProfile.updateManyAndReturn({
      where: { id: profile.id, [column]: current },
      data: data as Prisma.BusinessProfileUpdateManyMutationInput,
    });
    if (businessProfile === undefined) throw new AppError('CONFLICT', 'The signing key changed while it was being rotated; rotate again.');
    await this.context.cache.invalidate([profilesTag(principal.merchantId)]);
    return { businessProfile, paymentResponseHashKey: key, mode };
  }

  private async assertNameFree(merchantId: string, name: string): Promise<void> {
    const existing = await this.context.db.businessProfile.findUnique({
      where: { merchantId_name: { merchantId, name } },
      select: { id: true },
    });
    if (existing !== null) throw invalidInput('name', `a business profile named ${JSON.stringify(name)} already exists`);
  }

  /** The key that signs this profile's webhooks of `mode`, decrypted. */
  async signingKey(profileId: string, mode: Mode): Promise<string> {
    const profile = await this.context.db.businessProfile.findUniqueOrThrow({ where: { id: profileId } });
    return this.context.secretBox.open(profileSettings(profile, mode).paymentResponseHashKeyEncrypted);
  }
}

/** How long a replaced signing key keeps signing when rotateWebhookSigningKey is not told (docs/webhooks.md). */
export const DEFAULT_SIGNING_KEY_OVERLAP_SECONDS = 24 * 3600;

/** The mode whose settings a call changes: `mode`, or the key's; a test key may not change live ones. */
function modeToChange(principal: MerchantPrincipal, mode: Mode | null | undefined): Mode {
  const chosen = mode ?? principal.mode;
  if (chosen === 'LIVE' && principal.mode !== 'LIVE') throw new AppError('FORBIDDEN', 'A test key cannot change live-mode settings; use a live secret key.');
  return chosen;
}

/** The read cache's tag of a merchant's business profiles: invalidated whenever one of them changes. */
export const profilesTag = (merchantId: string) => `profiles:${merchantId}`;

type CachedReads = Pick<ServiceContext, 'db' | 'cache'>;

/**
 * The merchant's profile named by `profileId`, or its default one: INVALID_INPUT on profileId otherwise. From the
 * read cache (docs/architecture.md, "Read cache"): never mutate it.
 */
export async function profileFor(context: CachedReads, merchantId: string, profileId: string | null | undefined): Promise<BusinessProfile> {
  const { db } = context;
  const profile = await context.cache.read(`profile:${merchantId}:${profileId ?? ''}`, async () => {
    const row = profileId
      ? await db.businessProfile.findFirst({ where: { id: profileId, merchantId } })
      : await db.businessProfile.findFirst({ where: { merchantId, isDefault: true } });
    return { value: row, tags: row === null ? null : [profilesTag(merchantId)] };
  });
  if (profile === null)
    throw invalidInput('profileId', profileId ? `no business profile ${profileId} for this merchant` : 'this merchant has no default business profile');
  return profile;
}

/** The profile `profileId`, which must exist (a payment's), from the read cache: never mutate it. */
export function profileById(context: CachedReads, profileId: string): Promise<BusinessProfile> {
  return context.cache.read(`profile:${profileId}`, async () => {
    const row = await context.db.businessProfile.findUniqueOrThrow({ where: { id: profileId } });
    return { value: row, tags: [profilesTag(row.merchantId)] };
  });
}
