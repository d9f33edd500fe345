// API keys that expire (createApiKey's expiresAt) and their rotation (rotateApiKey): an expired key is refused
// like a revoked one, and its running subscriptions end the same way. Expiry is reached by setting expires_at
// in the past in the database, never by waiting, then invalidating the key's cached row, as an operator does after
// such a write (docs/operations.md, "Changing rows outside the service").
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CreateApiKeyDocument, MerchantDocument, PaymentEventsDocument, RotateApiKeyDocument } from '../gql/graphql.ts';
import { apiKeyTag } from '../../src/modules/merchants/index.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { liveChannel, subscribeSse, untilLive } from '../support/subscriptions.ts';

let stack: Stack;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

const DAY_MS = 24 * 3600 * 1000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();
const expireNow = async (keyId: string) => {
  await sql.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [keyId]);
  await stack.api.context.cache.invalidate([apiKeyTag(keyId)]);
};

describe('createApiKey expiresAt', () => {
  it.each([
    { expiresAt: inDays(-1), rule: 'must be in the future' },
    { expiresAt: inDays(367), rule: 'must be at most 366 days from now' },
  ])('refuses $expiresAt: expiresAt $rule', async ({ expiresAt, rule }) => {
    const merchant = await createMerchant(stack.api);
    const error = errorOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'ci', type: 'SECRET', expiresAt } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('expiresAt');
    expect(error.message).toContain(rule);
  });

  it('issues a key that works until it expires, then is refused with UNAUTHENTICATED', async () => {
    const merchant = await createMerchant(stack.api);
    const expiresAt = inDays(30);
    const { key, apiKey } = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'ci', type: 'SECRET', expiresAt } })).createApiKey;
    expect(apiKey.expiresAt).toBe(expiresAt);
    expect(dataOf(await stack.api.as(key)(MerchantDocument)).merchant.id).toBe(merchant.merchantId);
    await expireNow(apiKey.id);
    const error = errorOf(await stack.api.as(key)(MerchantDocument), 'UNAUTHENTICATED');
    expect(error.message).toContain('expired');
  });

  it('ends the running subscriptions of a key when it expires, as revocation does', async () => {
    const merchant = await createMerchant(stack.api);
    const { key, apiKey } = dataOf(
      await merchant.secret(CreateApiKeyDocument, { input: { name: 'wallboard', type: 'SECRET', expiresAt: inDays(1) } }),
    ).createApiKey;
    const stream = subscribeSse(stack.api.url, key, PaymentEventsDocument, { profileId: merchant.profileId });
    try {
      // Running before the key expires, as in the revocation test: a refused subscribe would end the same way.
      await untilLive(stack.env, liveChannel.events(merchant.merchantId));
      expect(stream.errors).toEqual([]);
      await expireNow(apiKey.id);
      const errors = await stream.waitForError(5_000);
      expect(errors.map((error) => error.extensions?.code)).toEqual(['UNAUTHENTICATED']);
    } finally {
      stream.close();
    }
  });
});

describe('rotateApiKey', () => {
  it.each([
    { expiresInSeconds: -1, rule: 'must be at least 0' },
    { expiresInSeconds: 30 * 24 * 3600 + 1, rule: 'must be at most 2592000 (30 days)' },
  ])('refuses expiresInSeconds $expiresInSeconds: $rule', async ({ expiresInSeconds, rule }) => {
    const merchant = await createMerchant(stack.api);
    const { apiKey } = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'ci', type: 'SECRET' } })).createApiKey;
    const error = errorOf(await merchant.secret(RotateApiKeyDocument, { input: { keyId: apiKey.id, expiresInSeconds } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('expiresInSeconds');
    expect(error.message).toContain(rule);
  });

  it('issues a successor of the same type, mode and name; the old key works until its new expiry, then is refused', async () => {
    const merchant = await createMerchant(stack.api);
    const old = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'backend', type: 'SECRET' } })).createApiKey;
    const before = Date.now();
    const rotated = dataOf(await stack.api.as(old.key)(RotateApiKeyDocument, { input: { keyId: old.apiKey.id, expiresInSeconds: 3600 } })).rotateApiKey;
    expect(rotated.apiKey).toMatchObject({ name: 'backend', type: 'SECRET', mode: 'TEST', expiresAt: null, revokedAt: null });
    expect(rotated.key).toMatch(/^sk_test_/);
    expect(rotated.key).not.toBe(old.key);
    const oldExpiry = new Date(rotated.previousApiKey.expiresAt!).getTime();
    expect(oldExpiry).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(oldExpiry).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    // Both work during the overlap.
    expect(dataOf(await stack.api.as(old.key)(MerchantDocument)).merchant.id).toBe(merchant.merchantId);
    expect(dataOf(await stack.api.as(rotated.key)(MerchantDocument)).merchant.id).toBe(merchant.merchantId);
    await expireNow(old.apiKey.id);
    errorOf(await stack.api.as(old.key)(MerchantDocument), 'UNAUTHENTICATED');
    expect(dataOf(await stack.api.as(rotated.key)(MerchantDocument)).merchant.id).toBe(merchant.merchantId);
    // An expired key cannot be rotated again (its successor can).
    errorOf(await merchant.secret(RotateApiKeyDocument, { input: { keyId: old.apiKey.id, expiresInSeconds: 60 } }), 'INVALID_STATE');
  });

  it('revokes the old key at once with expiresInSeconds 0, and never extends an earlier expiry', async () => {
    const merchant = await createMerchant(stack.api);
    const now = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'now', type: 'PUBLISHABLE' } })).createApiKey;
    const rotated = dataOf(await merchant.secret(RotateApiKeyDocument, { input: { keyId: now.apiKey.id, expiresInSeconds: 0 } })).rotateApiKey;
    expect(rotated.apiKey.type).toBe('PUBLISHABLE');
    expect(rotated.previousApiKey.revokedAt).not.toBeNull();
    errorOf(await stack.api.as(now.key)(MerchantDocument), 'UNAUTHENTICATED');

    const soon = inDays(1);
    const short = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'short', type: 'SECRET', expiresAt: soon } })).createApiKey;
    const kept = dataOf(await merchant.secret(RotateApiKeyDocument, { input: { keyId: short.apiKey.id, expiresInSeconds: 30 * 24 * 3600 } })).rotateApiKey;
    expect(kept.previousApiKey.expiresAt).toBe(soon);
  });

  it('rotates only the merchant’s own keys (NOT_FOUND otherwise)', async () => {
    const alice = await createMerchant(stack.api);
    const bob = await createMerchant(stack.api);
    const bobs = dataOf(await bob.secret(CreateApiKeyDocument, { input: { name: 'b', type: 'SECRET' } })).createApiKey;
    errorOf(await alice.secret(RotateApiKeyDocument, { input: { keyId: bobs.apiKey.id, expiresInSeconds: 60 } }), 'NOT_FOUND');
    const { rows } = await sql.query('SELECT expires_at FROM api_keys WHERE id = $1', [bobs.apiKey.id]);
    expect(rows[0].expires_at).toBeNull();
  });
});
