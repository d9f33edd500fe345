// A business profile's settings that decide what payments, payouts and webhooks do. Each is kept once per mode,
// as a test_ and a live_ column of the profile's one row (the payment path joins nothing), the way the webhook
// URLs are: a test key changes the test settings only, and a live payment, payout or webhook uses the live ones.
import type { Mode } from '../../kernel/api-keys.ts';
import type { SecretBox } from '../../kernel/secret-box.ts';
import type { SurchargeRule } from '../payments/surcharges.ts';
import type { BusinessProfile, Prisma } from '../../generated/prisma/client.ts';

export interface ProfileSettings {
  /** AES-256-GCM ciphertext of the key that signs the mode's webhooks. */
  paymentResponseHashKeyEncrypted: string;
  /** The key rotateWebhookSigningKey replaced, signing beside the current one until the expiry below (docs/webhooks.md). */
  previousPaymentResponseHashKeyEncrypted: string | null;
  previousPaymentResponseHashKeyExpiresAt: Date | null;
  webhookSigningKeyRotatedAt: Date | null;
  routing: string[];
  maxRetries: number;
  retryableDeclineCodes: string[];
  sessionExpirySeconds: number;
  allowPartialAuthorization: boolean;
  surcharges: SurchargeRule[];
  payoutLimit: number | null;
  /** A platform's profile: also receive its connected merchants' events of the mode; the outbox's insert reads it in SQL (docs/platforms.md). */
  receiveConnectedMerchantEvents: boolean;
}

type Setting = keyof ProfileSettings;
type Prefix = 'test' | 'live';
/** The column holding `setting` in one mode: routing is testRouting and liveRouting. */
type ColumnOf<P extends Prefix, S extends Setting> = `${P}${Capitalize<S>}`;

/** The columns profileSettings reads: a whole profile row will do. */
export type ProfileSettingColumns = Pick<BusinessProfile, ColumnOf<Prefix, Setting>>;

const prefixOf = (mode: Mode): Prefix => (mode === 'LIVE' ? 'live' : 'test');

/** Each setting's column in each mode, named once: every createPayment and confirm reads a dozen of them. */
const COLUMNS: Record<Prefix, Map<Setting, string>> = { test: new Map(), live: new Map() };

function columnOf<P extends Prefix, S extends Setting>(prefix: P, setting: S): ColumnOf<P, S> {
  let column = COLUMNS[prefix].get(setting);
  if (column === undefined) COLUMNS[prefix].set(setting, (column = `${prefix}${setting[0]!.toUpperCase()}${setting.slice(1)}`));
  return column as ColumnOf<P, S>;
}

/** The settings `mode`'s payments, payouts and webhooks use: the only way the service reads them. */
export function profileSettings(profile: ProfileSettingColumns, mode: Mode): ProfileSettings {
  const prefix = prefixOf(mode);
  // Both modes' columns have one type: the test column's names it.
  const read = <S extends Setting>(setting: S) => profile[columnOf(prefix, setting)] as ProfileSettingColumns[ColumnOf<'test', S>];
  return {
    paymentResponseHashKeyEncrypted: read('paymentResponseHashKeyEncrypted'),
    previousPaymentResponseHashKeyEncrypted: read('previousPaymentResponseHashKeyEncrypted'),
    previousPaymentResponseHashKeyExpiresAt: read('previousPaymentResponseHashKeyExpiresAt'),
    webhookSigningKeyRotatedAt: read('webhookSigningKeyRotatedAt'),
    routing: read('routing'),
    maxRetries: read('maxRetries'),
    retryableDeclineCodes: read('retryableDeclineCodes'),
    sessionExpirySeconds: read('sessionExpirySeconds'),
    allowPartialAuthorization: read('allowPartialAuthorization'),
    // Stored as JSON, written only through updateBusinessProfile's validation.
    surcharges: read('surcharges') as unknown as SurchargeRule[],
    payoutLimit: read('payoutLimit'),
    receiveConnectedMerchantEvents: read('receiveConnectedMerchantEvents'),
  };
}

/** The sealed keys that sign the mode's webhooks at `now`: the current one, and the replaced one while its overlap lasts. */
export function sealedSigningKeys(
  settings: Pick<ProfileSettings, 'paymentResponseHashKeyEncrypted' | 'previousPaymentResponseHashKeyEncrypted' | 'previousPaymentResponseHashKeyExpiresAt'>,
  now: Date,
): { current: string; previous: string | null } {
  const expiresAt = settings.previousPaymentResponseHashKeyExpiresAt;
  const overlapping = settings.previousPaymentResponseHashKeyEncrypted !== null && expiresAt !== null && expiresAt.getTime() > now.getTime();
  return { current: settings.paymentResponseHashKeyEncrypted, previous: overlapping ? settings.previousPaymentResponseHashKeyEncrypted : null };
}

/** The update that sets `changes` in `mode` only; settings left undefined keep their value. */
export function profileSettingsUpdate(mode: Mode, changes: Partial<ProfileSettings>): Prisma.BusinessProfileUpdateInput {
  const prefix = prefixOf(mode);
  return Object.fromEntries(
    Object.entries(changes)
      .filter(([, value]) => value !== undefined)
      .map(([setting, value]) => [columnOf(prefix, setting as Setting), value]),
  );
}

/**
 * A new profile's settings: the column defaults in both modes, and each mode's own signing key (sealed here), so
 * the key shown to a test key's caller never signs live webhooks.
 */
export function newProfileSettings(
  secretBox: SecretBox,
  signingKeys: Record<Mode, string>,
): Pick<BusinessProfile, ColumnOf<Prefix, 'paymentResponseHashKeyEncrypted'>> {
  return { testPaymentResponseHashKeyEncrypted: secretBox.seal(signingKeys.TEST), livePaymentResponseHashKeyEncrypted: secretBox.seal(signingKeys.LIVE) };
}
