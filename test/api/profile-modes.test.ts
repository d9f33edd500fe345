// A business profile's settings are kept per mode, over HTTP: whatever a test key sets through
// updateBusinessProfile, a live payment, payout or webhook behaves as before (a test key's card surcharge once
// charged a live payment of 1000 as 1001200, and its signing key signed live webhooks); the live key changes live.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  BusinessProfileSettingsDocument,
  ConfirmPaymentDocument,
  CreateApiKeyDocument,
  CreateBusinessProfileDocument,
  CreatePaymentDocument,
  CreatePayoutDocument,
  EventsDocument,
  PaymentDocument,
  UpdateBusinessProfileDocument,
  UpdateMerchantAccountDocument,
  type CreatePaymentInput,
  type UpdateBusinessProfileInput,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf, type Execute } from '../support/graphql-client.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack.close();
});

const LIVE_WEBHOOK_HOST = 'hooks.shop.example';

/** A merchant with its test key and a live secret key, and live accounts at sandbox then fauxpay (the default routing order). */
async function liveMerchant() {
  const merchant = await createMerchant(stack.api);
  const { key } = dataOf(
    await stack.api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: merchant.merchantId } }),
  ).createApiKey;
  const live = { secret: stack.api.as(key) };
  await addConnectorAccount(stack, live, 'sandbox');
  await addConnectorAccount(stack, live, 'fauxpay');
  // Never shown to the merchant's test key: read here to tell which key signed a live webhook.
  const liveSigningKey = await stack.api.services.businessProfiles.signingKey(merchant.profileId, 'LIVE');
  return { ...merchant, live: live.secret, liveSigningKey };
}

type LiveMerchant = Awaited<ReturnType<typeof liveMerchant>>;

/** Creates and confirms a live payment; answers the payment, or the error code of a refused confirm. */
async function livePayment(live: Execute, number: string, extra: Partial<CreatePaymentInput> = {}) {
  const created = dataOf(await live(CreatePaymentDocument, { input: { amount: 1000, currency: 'USD', ...extra } })).createPayment;
  const confirmed = await live(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } });
  const payment = dataOf(await live(PaymentDocument, { id: created.id })).payment!;
  return { payment, error: confirmed.errors?.[0]?.extensions?.['code'] ?? null };
}

async function attemptsOfLivePayment(live: Execute, number: string) {
  const { payment } = await livePayment(live, number);
  return payment.attempts.map((attempt) => `${attempt.connector}:${attempt.status}`);
}

const SIGNING_KEYS = { test: 't'.repeat(40), live: 'l'.repeat(40) };

/** Lets the profile's live webhooks go to a host that does not resolve: each attempt fails and is recorded with its headers. */
async function sendLiveWebhooks(merchant: LiveMerchant, profileId = merchant.profileId) {
  dataOf(await stack.api.admin(UpdateMerchantAccountDocument, { input: { merchantId: merchant.merchantId, liveWebhookHosts: [LIVE_WEBHOOK_HOST] } }));
  dataOf(await merchant.live(UpdateBusinessProfileDocument, { input: { profileId, webhookUrl: `https://${LIVE_WEBHOOK_HOST}/hooks` } }));
}

/** Which of `keys` signed the live webhook of a new live payment of the profile. */
async function liveWebhookSigner(merchant: LiveMerchant, keys: Record<string, string>, profileId = merchant.profileId) {
  const { payment } = await livePayment(merchant.live, '4242424242424242', { profileId });
  const event = await vi.waitFor(
    async () => {
      const events = dataOf(await merchant.live(EventsDocument, { objectId: payment.id, first: 10 })).events.edges.map((edge) => edge.node);
      const succeeded = events.find((candidate) => candidate.eventType === 'PAYMENT_SUCCEEDED');
      expect(succeeded?.attempts.length).toBeGreaterThan(0);
      return succeeded!;
    },
    { timeout: 15_000, interval: 100 },
  );
  expect(event.mode).toBe('LIVE');
  const signature = (event.attempts[0]!.requestHeaders as Record<string, string>)['x-webhook-signature-512'];
  return Object.entries(keys).find(([, key]) => createHmac('sha512', key).update(event.body).digest('hex') === signature)?.[0] ?? 'none of them';
}

interface SettingCase {
  /** What updateBusinessProfile is given, by the test key and then by the live key. */
  input: Partial<UpdateBusinessProfileInput>;
  /** The live-mode behaviour the setting decides, as a value to compare. */
  live: (merchant: LiveMerchant) => Promise<unknown>;
  /** The live behaviour with the settings a new profile has, and once the live key has set `input`. */
  unchanged: unknown;
  changed: unknown;
  /** Prepares the merchant (e.g. a live webhook URL) before anything is set. */
  setUp?: (merchant: LiveMerchant) => Promise<void>;
  /** The input for the live key, when it differs from the test key's. */
  liveInput?: Partial<UpdateBusinessProfileInput>;
}

const cases: Record<string, SettingCase> = {
  // The reproduction: 1000 plus 1000000 and 20 %.
  surcharges: {
    input: { surcharges: [{ paymentMethodType: 'CARD', fixedAmount: 1_000_000, percentBps: 2_000 }] },
    live: async (merchant) => {
      const { payment } = await livePayment(merchant.live, '4242424242424242');
      return { surchargeAmount: payment.surchargeAmount, amountReceived: payment.amountReceived };
    },
    unchanged: { surchargeAmount: 0, amountReceived: 1000 },
    changed: { surchargeAmount: 1_000_200, amountReceived: 1_001_200 },
  },
  paymentResponseHashKey: {
    input: { paymentResponseHashKey: SIGNING_KEYS.test },
    liveInput: { paymentResponseHashKey: SIGNING_KEYS.live },
    setUp: (merchant) => sendLiveWebhooks(merchant),
    // The key createMerchantAccount showed is the test one: it never signs live webhooks.
    live: (merchant) =>
      liveWebhookSigner(merchant, { shownAtCreation: merchant.paymentResponseHashKey, liveAtCreation: merchant.liveSigningKey, ...SIGNING_KEYS }),
    unchanged: 'liveAtCreation',
    changed: 'live',
  },
  routing: {
    input: { routing: ['fauxpay', 'sandbox'] },
    live: (merchant) => attemptsOfLivePayment(merchant.live, '4242424242424242'),
    unchanged: ['sandbox:CHARGED'],
    changed: ['fauxpay:CHARGED'],
  },
  maxRetries: {
    input: { maxRetries: 0 },
    // A retryable processor error at sandbox.
    live: (merchant) => attemptsOfLivePayment(merchant.live, '4000000000000119'),
    unchanged: ['sandbox:FAILURE', 'fauxpay:CHARGED'],
    changed: ['sandbox:AUTHORIZATION_FAILED'],
  },
  retryableDeclineCodes: {
    input: { retryableDeclineCodes: ['card_declined'] },
    live: (merchant) => attemptsOfLivePayment(merchant.live, '4000000000000002'),
    unchanged: ['sandbox:AUTHORIZATION_FAILED'],
    changed: ['sandbox:FAILURE', 'fauxpay:AUTHORIZATION_FAILED'],
  },
  sessionExpirySeconds: {
    input: { sessionExpirySeconds: 3600 },
    live: async (merchant) => {
      const created = dataOf(await merchant.live(CreatePaymentDocument, { input: { amount: 1000, currency: 'USD' } })).createPayment;
      return Math.round((new Date(created.expiresAt!).getTime() - Date.now()) / 60_000);
    },
    unchanged: 15,
    changed: 60,
  },
  allowPartialAuthorization: {
    input: { allowPartialAuthorization: true },
    // A card with too little funds, on a payment the merchant captures.
    live: async (merchant) => {
      const { payment, error } = await livePayment(merchant.live, '4000000000001976', { captureMethod: 'MANUAL', amount: 4001, currency: 'EUR' });
      return { status: payment.status, error };
    },
    unchanged: { status: 'FAILED', error: 'PAYMENT_DECLINED' },
    changed: { status: 'PARTIALLY_AUTHORIZED', error: null },
  },
  payoutLimit: {
    input: { payoutLimit: 1000 },
    live: async (merchant) => {
      const destination = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, holderName: 'Ada Lovelace' } };
      return dataOf(await merchant.live(CreatePayoutDocument, { input: { amount: 5000, currency: 'EUR', destination } })).createPayout.status;
    },
    unchanged: 'INITIATED',
    changed: 'NOT_PERMITTED',
  },
};

const settingsSeenBy = async (key: Execute) => dataOf(await key(BusinessProfileSettingsDocument)).businessProfiles[0]!;

describe('profile settings are kept per mode', () => {
  it.each(Object.entries(cases))('%s: a test key changes test mode only; the live key changes live mode', async (setting, check) => {
    const merchant = await liveMerchant();
    await check.setUp?.(merchant);
    const liveBefore = await settingsSeenBy(merchant.live);
    expect(await check.live(merchant)).toEqual(check.unchanged);

    dataOf(await merchant.secret(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, ...check.input } }));
    expect(await check.live(merchant), 'a live payment after the test key’s change').toEqual(check.unchanged);
    expect(await settingsSeenBy(merchant.live)).toEqual(liveBefore);
    // The test key's businessProfiles shows its own change (the signing key is never shown).
    if (setting !== 'paymentResponseHashKey') expect(await settingsSeenBy(merchant.secret)).not.toEqual(liveBefore);

    dataOf(await merchant.live(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, ...(check.liveInput ?? check.input) } }));
    expect(await check.live(merchant), 'a live payment after the live key’s change').toEqual(check.changed);
  });

  it('a profile a test key creates signs its live webhooks with a live key of its own, never the key the test key was shown', async () => {
    const merchant = await liveMerchant();
    const created = dataOf(await merchant.secret(CreateBusinessProfileDocument, { input: { name: 'second shop' } })).createBusinessProfile;
    const profileId = created.businessProfile.id;
    expect(created.paymentResponseHashKey).toBe(await stack.api.services.businessProfiles.signingKey(profileId, 'TEST'));
    await sendLiveWebhooks(merchant, profileId);
    const liveSigningKey = await stack.api.services.businessProfiles.signingKey(profileId, 'LIVE');
    expect(liveSigningKey).toMatch(/^[0-9a-f]{64}$/);
    expect(await liveWebhookSigner(merchant, { shownToTheTestKey: created.paymentResponseHashKey!, live: liveSigningKey }, profileId)).toBe('live');
  });

  it('a test key may not ask for live mode', async () => {
    const merchant = await liveMerchant();
    errorOf(await merchant.secret(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, mode: 'LIVE', maxRetries: 0 } }), 'FORBIDDEN');
    expect((await settingsSeenBy(merchant.live)).maxRetries).toBe(2);
  });
});
