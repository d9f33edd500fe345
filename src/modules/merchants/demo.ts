// The demo merchant of `npm start`: created on first start with a sandbox connector account; the same
// keys printed on every start. Its keys are random (generateDemoKeys) and kept by the caller (the demo's
// secrets file), so none can be computed from the repository.
import { randomBytes } from 'node:crypto';
import { CONNECTORS, connectorAccountsTag } from '../connectors/index.ts';
import { hashApiKey, redactApiKey } from '../../kernel/api-keys.ts';
import { StartupError } from '../../platform/startup-error.ts';
import { newSigningKeys, profilesTag } from './profile-service.ts';
import { apiKeyTag } from './key-service.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { newProfileSettings } from './profile-settings.ts';

export const DEMO_MERCHANT_ID = 'mer_DemoMerchant000000000000';
const DEMO_PROFILE_ID = 'pro_DemoProfile0000000000000';
const DEMO_CONNECTOR_ACCOUNT_ID = 'mca_DemoSandbox0000000000000';
const DEMO_SECRET_KEY_ID = 'key_DemoSecretKey00000000000';
const DEMO_PAYMENT_LINK_ID = 'plink_DemoCheckout000000000000';
/** The demo link is good for this long from each start, so the printed checkout URL always works. */
const DEMO_LINK_VALIDITY_MS = 30 * 24 * 60 * 60 * 1000;

export interface DemoKeys {
  secretKey: string;
  publishableKey: string;
  paymentResponseHashKey: string;
  /** What the demo's sandbox connector account authenticates to the sandbox processor with. */
  sandboxApiKey: string;
}

const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');

export function generateDemoKeys(): DemoKeys {
  return {
    secretKey: `sk_test_${randomHex(16)}`,
    publishableKey: `pk_test_${randomHex(16)}`,
    paymentResponseHashKey: randomHex(32),
    sandboxApiKey: `sk_sandbox_${randomHex(16)}`,
  };
}

/** The demo merchant's stored secrets were sealed with another ENCRYPTION_KEY than this start's. */
export class DemoKeyMismatchError extends StartupError {}

export interface DemoCredentials {
  merchantId: string;
  profileId: string;
  secretKey: string;
  publishableKey: string;
  paymentResponseHashKey: string;
  connectorAccountId: string;
  /** The id of the demo secret key (what a request with it would be authenticated as). */
  secretKeyId: string;
  /** A payment link whose Pay button opens the hosted checkout. */
  paymentLinkId: string;
}

/**
 * Creates the demo merchant with `demoKeys`, or brings an existing one back to them. An existing one whose
 * stored secrets this ENCRYPTION_KEY cannot open (its key was lost) is refused: every secret stored with
 * the old key, the demo's and any other merchant's, would be unreadable.
 */
export async function ensureDemoMerchant(context: ServiceContext, demoKeys: DemoKeys): Promise<DemoCredentials> {
  const { db, secretBox } = context;
  const credentials: DemoCredentials = {
    merchantId: DEMO_MERCHANT_ID,
    profileId: DEMO_PROFILE_ID,
    secretKey: demoKeys.secretKey,
    publishableKey: demoKeys.publishableKey,
    paymentResponseHashKey: demoKeys.paymentResponseHashKey,
    connectorAccountId: DEMO_CONNECTOR_ACCOUNT_ID,
    secretKeyId: DEMO_SECRET_KEY_ID,
    paymentLinkId: DEMO_PAYMENT_LINK_ID,
  };
  const existing = await db.businessProfile.findUnique({ where: { id: DEMO_PROFILE_ID }, select: { testPaymentResponseHashKeyEncrypted: true } });
  if (existing && !opens(secretBox, existing.testPaymentResponseHashKeyEncrypted)) {
    throw new DemoKeyMismatchError('the demo merchant in this database was created with another ENCRYPTION_KEY, so its stored secrets cannot be read');
  }
  const keys = [
    { id: DEMO_SECRET_KEY_ID, type: 'SECRET' as const, key: credentials.secretKey, name: 'demo secret key' },
    { id: 'key_DemoPublishableKey000000', type: 'PUBLISHABLE' as const, key: credentials.publishableKey, name: 'demo publishable key' },
  ];
  await db.$transaction(async (tx) => {
    await tx.merchantAccount.upsert({ where: { id: DEMO_MERCHANT_ID }, create: { id: DEMO_MERCHANT_ID, name: 'Demo Merchant' }, update: {} });
    await tx.businessProfile.upsert({
      where: { id: DEMO_PROFILE_ID },
      create: {
        id: DEMO_PROFILE_ID,
        merchantId: DEMO_MERCHANT_ID,
        name: 'default',
        isDefault: true,
        // The demo's keys are test keys: its live signing key is nobody's to know.
        ...newProfileSettings(secretBox, { ...newSigningKeys(), TEST: credentials.paymentResponseHashKey }),
      },
      update: {},
    });
    await tx.connectorAccount.upsert({
      where: { id: DEMO_CONNECTOR_ACCOUNT_ID },
      create: {
        id: DEMO_CONNECTOR_ACCOUNT_ID,
        merchantId: DEMO_MERCHANT_ID,
        connectorName: 'sandbox',
        mode: 'TEST',
        credentialsEncrypted: secretBox.seal(JSON.stringify({ apiKey: demoKeys.sandboxApiKey })),
        paymentMethods: [...CONNECTORS.sandbox.paymentMethods],
      },
      // Every method the sandbox offers, so each group of docs/payments.md ("Payment methods") can be
      // tried with the demo keys.
      update: { paymentMethods: [...CONNECTORS.sandbox.paymentMethods] },
    });
    for (const { id, type, key, name } of keys) {
      // Re-enable the demo keys if someone revoked them while trying the API.
      const fields = { keyHash: hashApiKey(key), redacted: redactApiKey(key), publishableKey: type === 'PUBLISHABLE' ? key : null, revokedAt: null };
      await tx.apiKey.upsert({ where: { id }, create: { id, merchantId: DEMO_MERCHANT_ID, name, type, mode: 'TEST', ...fields }, update: fields });
    }
    const expiresAt = new Date(Date.now() + DEMO_LINK_VALIDITY_MS);
    await tx.paymentLink.upsert({
      where: { id: DEMO_PAYMENT_LINK_ID },
      create: {
        id: DEMO_PAYMENT_LINK_ID,
        merchantId: DEMO_MERCHANT_ID,
        profileId: DEMO_PROFILE_ID,
        mode: 'TEST',
        currency: 'EUR',
        amount: 2000,
        description: 'Demo: a coffee mug',
        expiresAt,
      },
      update: { expiresAt },
    });
  });
  await context.cache.invalidate([profilesTag(DEMO_MERCHANT_ID), connectorAccountsTag(DEMO_MERCHANT_ID), ...keys.map(({ id }) => apiKeyTag(id))]);
  return credentials;
}

function opens(secretBox: ServiceContext['secretBox'], sealed: string): boolean {
  try {
    secretBox.open(sealed);
    return true;
  } catch {
    return false;
  }
}
