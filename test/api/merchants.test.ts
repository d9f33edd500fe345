// Merchant setup over real HTTP: who may do what, keys shown once and stored only as hashes, and no merchant
// ever seeing another's data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/kernel/api-keys.ts';
import {
  BusinessProfilesDocument,
  CreateApiKeyDocument,
  CreateBusinessProfileDocument,
  CreateMerchantAccountDocument,
  MerchantDocument,
  RevokeApiKeyDocument,
  UpdateBusinessProfileDocument,
  UpdateMerchantAccountDocument,
} from '../gql/graphql.ts';
import { createMerchant, startTestApiWithDatabase, type TestApiWithDatabase } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';

let api: TestApiWithDatabase;

beforeAll(async () => {
  api = await startTestApiWithDatabase();
});
afterAll(() => api.close());

async function count(table: string, merchantId: string): Promise<number> {
  const column = table === 'merchant_accounts' ? 'id' : 'merchant_id';
  const { rows } = await api.sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [merchantId]);
  return rows[0].n;
}

describe('createMerchantAccount', () => {
  it('creates a merchant with a default profile and one test secret and one test publishable key', async () => {
    const merchant = await createMerchant(api, 'Acme Books');
    expect(merchant.merchantId).toMatch(/^mer_[0-9A-Za-z]{24}$/);
    expect(merchant.profileId).toMatch(/^pro_[0-9A-Za-z]{24}$/);
    expect(merchant.secretKey).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
    expect(merchant.publishableKey).toMatch(/^pk_test_[0-9A-Za-z]{32}$/);
    expect(merchant.paymentResponseHashKey).toMatch(/^[0-9a-f]{64}$/);

    const { merchant: me } = dataOf(await merchant.secret(MerchantDocument));
    expect(me).toMatchObject({ id: merchant.merchantId, name: 'Acme Books', liveWebhookHosts: [] });
    expect(me.businessProfiles).toEqual([{ id: merchant.profileId, name: 'default', isDefault: true }]);
    expect(me.apiKeys.map((key) => [key.type, key.mode])).toEqual([
      ['SECRET', 'TEST'],
      ['PUBLISHABLE', 'TEST'],
    ]);
    expect(me.apiKeys[0]!.redacted).toBe(`sk_test_…${merchant.secretKey.slice(-4)}`);
  });

  it('stores secret keys and the signing key only as hashes or ciphertext (publishable keys, public by design, also in clear)', async () => {
    const merchant = await createMerchant(api);
    const { rows: keys } = await api.sql.query('SELECT * FROM api_keys WHERE merchant_id = $1', [merchant.merchantId]);
    expect(JSON.stringify(keys)).not.toContain(merchant.secretKey);
    const byType = Object.fromEntries(keys.map((row) => [row.type, row]));
    expect([byType['SECRET'].publishable_key, byType['PUBLISHABLE'].publishable_key]).toEqual([null, merchant.publishableKey]);
    // The database refuses a secret key kept in clear.
    await expect(api.sql.query(`UPDATE api_keys SET publishable_key = 'sk_test_x' WHERE id = $1`, [byType['SECRET'].id])).rejects.toThrow(
      /api_keys_only_publishable_kept/,
    );
    expect(keys.map((row) => row.key_hash).sort()).toEqual([hashApiKey(merchant.secretKey), hashApiKey(merchant.publishableKey)].sort());
    const { rows: profiles } = await api.sql.query('SELECT * FROM business_profiles WHERE merchant_id = $1', [merchant.merchantId]);
    expect(JSON.stringify(profiles)).not.toContain(merchant.paymentResponseHashKey);
    expect(profiles[0].test_payment_response_hash_key_encrypted).toMatch(/^v1\./);
  });

  it('needs the admin key', async () => {
    const merchant = await createMerchant(api);
    const anonymous = await api.as()(CreateMerchantAccountDocument, { input: { name: 'x' } });
    expect(anonymous.status).toBe(401);
    errorOf(anonymous, 'UNAUTHENTICATED');
    errorOf(await merchant.secret(CreateMerchantAccountDocument, { input: { name: 'x' } }), 'FORBIDDEN');
    errorOf(await merchant.publishable(CreateMerchantAccountDocument, { input: { name: 'x' } }), 'FORBIDDEN');
    const wrongAdmin = await api.as('admin_test_key_0123456789abcdeX')(CreateMerchantAccountDocument, { input: { name: 'x' } });
    errorOf(wrongAdmin, 'UNAUTHENTICATED');
  });

  it.each([
    ['', 'must not be empty'],
    ['   ', 'must not be empty'],
    ['x'.repeat(101), 'at most 100'],
  ])('rejects the name %j, naming the field, and writes nothing', async (name, rule) => {
    const error = errorOf(await api.admin(CreateMerchantAccountDocument, { input: { name } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('name');
    expect(error.message).toContain(rule);
    const written = await api.sql.query('SELECT count(*)::int AS n FROM merchant_accounts WHERE name = $1 OR name = trim($1)', [name]);
    expect(written.rows[0].n).toBe(0);
  });
});

describe('keys', () => {
  it('a wrong, malformed or revoked key is refused with UNAUTHENTICATED and HTTP 401', async () => {
    const merchant = await createMerchant(api);
    for (const key of ['sk_test_' + 'A'.repeat(32), 'not-a-key', merchant.secretKey.slice(0, -1) + (merchant.secretKey.endsWith('X') ? 'Y' : 'X')]) {
      const result = await api.as(key)(MerchantDocument);
      expect(result.status).toBe(401);
      errorOf(result, 'UNAUTHENTICATED');
    }
    const extra = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'ci', type: 'SECRET' } })).createApiKey;
    dataOf(await api.as(extra.key)(MerchantDocument));
    const revoked = dataOf(await merchant.secret(RevokeApiKeyDocument, { input: { keyId: extra.apiKey.id } }));
    expect(revoked.revokeApiKey.apiKey.revokedAt).not.toBeNull();
    const refused = await api.as(extra.key)(MerchantDocument);
    expect(refused.status).toBe(401);
    expect(errorOf(refused, 'UNAUTHENTICATED').message).toContain('revoked');
  });

  it('accepts the key in "api-key" or "Authorization: Bearer"', async () => {
    const merchant = await createMerchant(api);
    const viaBearer = await api.as()(MerchantDocument, undefined, { authorization: `Bearer ${merchant.secretKey}` });
    expect(dataOf(viaBearer).merchant.id).toBe(merchant.merchantId);
  });

  it('a publishable key cannot perform merchant operations', async () => {
    const merchant = await createMerchant(api);
    errorOf(await merchant.publishable(MerchantDocument), 'FORBIDDEN');
    errorOf(await merchant.publishable(CreateApiKeyDocument, { input: { name: 'x', type: 'SECRET' } }), 'FORBIDDEN');
    errorOf(await merchant.publishable(BusinessProfilesDocument), 'FORBIDDEN');
  });

  it('a test key issues test keys only; the admin key issues live keys, which then act in live mode', async () => {
    const merchant = await createMerchant(api);
    errorOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE' } }), 'FORBIDDEN');
    const live = dataOf(
      await api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: merchant.merchantId } }),
    ).createApiKey;
    expect(live.key).toMatch(/^sk_live_/);
    expect(live.apiKey).toMatchObject({ mode: 'LIVE', type: 'SECRET', redacted: `sk_live_…${live.key.slice(-4)}` });
    // Each mode sees only its own keys.
    const liveView = dataOf(await api.as(live.key)(MerchantDocument)).merchant.apiKeys;
    expect(liveView.map((key) => key.mode)).toEqual(['LIVE']);
    const testView = dataOf(await merchant.secret(MerchantDocument)).merchant.apiKeys;
    expect(testView.every((key) => key.mode === 'TEST')).toBe(true);
    // A live key acting on a test resource finds nothing, and says why.
    const testKeyId = testView[0]!.id;
    const error = errorOf(await api.as(live.key)(RevokeApiKeyDocument, { input: { keyId: testKeyId } }), 'NOT_FOUND');
    expect(error.message).toContain('test key');
    const { rows } = await api.sql.query('SELECT revoked_at FROM api_keys WHERE id = $1', [testKeyId]);
    expect(rows[0].revoked_at).toBeNull();
  });

  it('the admin key must name an existing merchant', async () => {
    errorOf(await api.admin(CreateApiKeyDocument, { input: { name: 'x', type: 'SECRET' } }), 'INVALID_INPUT');
    errorOf(await api.admin(CreateApiKeyDocument, { input: { name: 'x', type: 'SECRET', merchantId: 'mer_nope' } }), 'NOT_FOUND');
  });
});

describe('isolation between merchants', () => {
  it('no merchant reads or changes another merchant’s data', async () => {
    const alice = await createMerchant(api, 'Alice');
    const bob = await createMerchant(api, 'Bob');
    expect(dataOf(await alice.secret(MerchantDocument)).merchant.id).toBe(alice.merchantId);
    const aliceProfiles = dataOf(await alice.secret(BusinessProfilesDocument)).businessProfiles;
    expect(aliceProfiles.map((profile) => profile.id)).toEqual([alice.profileId]);

    const bobKeys = dataOf(await bob.secret(MerchantDocument)).merchant.apiKeys;
    errorOf(await alice.secret(RevokeApiKeyDocument, { input: { keyId: bobKeys[0]!.id } }), 'NOT_FOUND');
    errorOf(await alice.secret(UpdateBusinessProfileDocument, { input: { profileId: bob.profileId, webhookUrl: 'https://evil.example/hook' } }), 'NOT_FOUND');
    errorOf(await alice.secret(CreateApiKeyDocument, { input: { name: 'x', type: 'SECRET', merchantId: bob.merchantId } }), 'NOT_FOUND');
    const { rows } = await api.sql.query('SELECT test_webhook_url FROM business_profiles WHERE id = $1', [bob.profileId]);
    expect(rows[0].test_webhook_url).toBeNull();
    expect(await count('api_keys', bob.merchantId)).toBe(2);
    expect(await count('api_keys', alice.merchantId)).toBe(2);
    dataOf(await api.as(bob.secretKey)(MerchantDocument));
  });
});

describe('business profiles', () => {
  it('sets the test webhook URL with a test key, and generates a signing key shown once', async () => {
    const merchant = await createMerchant(api);
    const updated = dataOf(
      await merchant.secret(UpdateBusinessProfileDocument, {
        input: { profileId: merchant.profileId, webhookUrl: 'http://localhost:9000/hooks', generatePaymentResponseHashKey: true },
      }),
    ).updateBusinessProfile;
    expect(updated.businessProfile.testWebhookUrl).toBe('http://localhost:9000/hooks');
    expect(updated.businessProfile.liveWebhookUrl).toBeNull();
    expect(updated.paymentResponseHashKey).toMatch(/^[0-9a-f]{64}$/);
    expect(updated.paymentResponseHashKey).not.toBe(merchant.paymentResponseHashKey);
    const signingKey = await api.services.businessProfiles.signingKey(merchant.profileId, 'TEST');
    expect(signingKey).toBe(updated.paymentResponseHashKey);

    const own = dataOf(
      await merchant.secret(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, paymentResponseHashKey: 'k'.repeat(40) } }),
    ).updateBusinessProfile;
    expect(own.paymentResponseHashKey).toBeNull();
    expect(await api.services.businessProfiles.signingKey(merchant.profileId, 'TEST')).toBe('k'.repeat(40));
  });

  it('live settings need a live key, https and a host on the operator’s allowlist', async () => {
    const merchant = await createMerchant(api);
    errorOf(
      await merchant.secret(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, mode: 'LIVE', webhookUrl: 'https://shop.example/h' } }),
      'FORBIDDEN',
    );
    const liveKey = dataOf(await api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: merchant.merchantId } }))
      .createApiKey.key;
    const live = api.as(liveKey);
    const notAllowed = errorOf(
      await live(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, webhookUrl: 'https://shop.example/h' } }),
      'INVALID_INPUT',
    );
    expect(notAllowed.extensions?.field).toBe('webhookUrl');
    expect(notAllowed.message).toContain('allowlist');
    // Only the operator sets the allowlist.
    errorOf(await live(UpdateMerchantAccountDocument, { input: { merchantId: merchant.merchantId, liveWebhookHosts: ['shop.example'] } }), 'FORBIDDEN');
    dataOf(
      await api.admin(UpdateMerchantAccountDocument, { input: { merchantId: merchant.merchantId, liveWebhookHosts: ['*.shop.example', 'shop.example'] } }),
    );
    const plainHttp = errorOf(
      await live(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, webhookUrl: 'http://shop.example/h' } }),
      'INVALID_INPUT',
    );
    expect(plainHttp.message).toContain('https');
    const ok = dataOf(await live(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, webhookUrl: 'https://api.shop.example/h' } }));
    expect(ok.updateBusinessProfile.businessProfile).toMatchObject({ liveWebhookUrl: 'https://api.shop.example/h', testWebhookUrl: null });
  });

  it('rejects bad input naming the field and changes nothing', async () => {
    const merchant = await createMerchant(api);
    const cases: [Record<string, unknown>, string][] = [
      [{ webhookUrl: 'not a url' }, 'webhookUrl'],
      [{ webhookUrl: 'ftp://example.com/x' }, 'webhookUrl'],
      [{ webhookUrl: 'https://user:pw@example.com/x' }, 'webhookUrl'],
      [{ webhookUrl: `https://example.com/${'a'.repeat(2100)}` }, 'webhookUrl'],
      [{ paymentResponseHashKey: 'short' }, 'paymentResponseHashKey'],
      [{ paymentResponseHashKey: 'k'.repeat(40), generatePaymentResponseHashKey: true }, 'generatePaymentResponseHashKey'],
      [{ name: '' }, 'name'],
    ];
    for (const [fields, field] of cases) {
      const error = errorOf(await merchant.secret(UpdateBusinessProfileDocument, { input: { profileId: merchant.profileId, ...fields } }), 'INVALID_INPUT');
      expect(error.extensions?.field, JSON.stringify(fields)).toBe(field);
    }
    expect(await api.services.businessProfiles.signingKey(merchant.profileId, 'TEST')).toBe(merchant.paymentResponseHashKey);
    const { rows } = await api.sql.query('SELECT name, test_webhook_url FROM business_profiles WHERE id = $1', [merchant.profileId]);
    expect(rows[0]).toEqual({ name: 'default', test_webhook_url: null });
  });

  it('gives a new profile a signing key of its own in each mode, and shows the caller’s mode’s only', async () => {
    const merchant = await createMerchant(api);
    const liveKey = dataOf(await api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: merchant.merchantId } }))
      .createApiKey.key;
    /** Which of the profile's two signing keys (both present from its creation) the creation answer showed. */
    const shownKey = async ({ profileId, paymentResponseHashKey }: { profileId: string; paymentResponseHashKey: string | null }) => {
      const test = await api.services.businessProfiles.signingKey(profileId, 'TEST');
      const live = await api.services.businessProfiles.signingKey(profileId, 'LIVE');
      expect([test, live]).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), expect.stringMatching(/^[0-9a-f]{64}$/)]);
      if (test === live) return 'one key for both modes';
      return paymentResponseHashKey === test ? 'test' : paymentResponseHashKey === live ? 'live' : 'neither';
    };
    const createdBy = async (key: string, name: string) => {
      const created = dataOf(await api.as(key)(CreateBusinessProfileDocument, { input: { name } })).createBusinessProfile;
      return shownKey({ profileId: created.businessProfile.id, paymentResponseHashKey: created.paymentResponseHashKey });
    };
    expect({
      createMerchantAccount: await shownKey(merchant),
      'createBusinessProfile with a test key': await createdBy(merchant.secretKey, 'by the test key'),
      'createBusinessProfile with a live key': await createdBy(liveKey, 'by the live key'),
    }).toEqual({
      createMerchantAccount: 'test',
      'createBusinessProfile with a test key': 'test',
      'createBusinessProfile with a live key': 'live',
    });
  });

  it('creates further profiles with unique names', async () => {
    const merchant = await createMerchant(api);
    const created = dataOf(await merchant.secret(CreateBusinessProfileDocument, { input: { name: 'EU shop' } })).createBusinessProfile;
    expect(created.businessProfile).toMatchObject({ name: 'EU shop', isDefault: false });
    expect(created.paymentResponseHashKey).toMatch(/^[0-9a-f]{64}$/);
    const duplicate = errorOf(await merchant.secret(CreateBusinessProfileDocument, { input: { name: 'EU shop' } }), 'INVALID_INPUT');
    expect(duplicate.extensions?.field).toBe('name');
    const names = dataOf(await merchant.secret(BusinessProfilesDocument)).businessProfiles.map((profile) => profile.name);
    expect(names).toEqual(['default', 'EU shop']);
  });
});
