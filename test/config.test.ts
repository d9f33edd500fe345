import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { StartupError } from '../src/platform/startup-error.ts';

const HEX_KEY = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const KEY_BYTES = Buffer.from(HEX_KEY, 'hex');

/** loadConfig with an encryption key (required everywhere) under `env`. */
const load = (env: NodeJS.ProcessEnv) => loadConfig({ ENCRYPTION_KEY: HEX_KEY, ...env });

/** The ConfigError that loading `env` throws (fails the test when it throws nothing or something else). */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`load(${JSON.stringify(env)}) did not throw`);
}

describe('loadConfig', () => {
  it('gives the defaults of the public contract for an environment with only ENCRYPTION_KEY', () => {
    const config = load({});
    // The production API listens on every interface (in a container); the demo (npm start) on loopback only.
    expect(config.HOST).toBe('0.0.0.0');
    expect(config.WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe('none');
    expect(config.DATABASE_URL).toBe('postgresql://postgres@127.0.0.1:5432/payments');
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(config.PORT).toBe(4000);
    expect(config.WEBHOOK_RETRY_DELAY_SCALE).toBe(1);
    expect(config.PAYMENT_SYNC_DELAY_SCALE).toBe(1);
    expect(config.WORKER_CONCURRENCY).toBe(10);
    expect(config.WEBHOOK_CONCURRENCY).toBe(32);
    expect(config.ADMIN_API_KEY).toBeUndefined();
    expect(config.encryptionKey).toHaveLength(32);
  });

  it('treats empty strings as unset', () => {
    const config = load({
      DATABASE_URL: '',
      REDIS_URL: '',
      PORT: '',
      WEBHOOK_RETRY_DELAY_SCALE: '',
      ADMIN_API_KEY: '',
      LOG_LEVEL: '',
      GRAPHIQL: '',
    });
    expect(config).toEqual(load({}));
  });

  it('reads values that are set', () => {
    const config = load({
      DATABASE_URL: 'postgres://db.internal:5433/pay',
      REDIS_URL: 'rediss://cache.internal:6380',
      PORT: '8080',
      ADMIN_API_KEY: 'a'.repeat(24),
      PAYMENT_SYNC_DELAY_SCALE: '0.001',
      WORKER_CONCURRENCY: '25',
      WEBHOOK_CONCURRENCY: '64',
    });
    expect(config.DATABASE_URL).toBe('postgres://db.internal:5433/pay');
    expect(config.REDIS_URL).toBe('rediss://cache.internal:6380');
    expect(config.PORT).toBe(8080);
    expect(config.ADMIN_API_KEY).toBe('a'.repeat(24));
    expect(config.PAYMENT_SYNC_DELAY_SCALE).toBe(0.001);
    expect(config.WORKER_CONCURRENCY).toBe(25);
    expect(config.WEBHOOK_CONCURRENCY).toBe(64);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '80.5'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://x'],
    ['WEBHOOK_RETRY_DELAY_SCALE', '0'],
    ['WEBHOOK_RETRY_DELAY_SCALE', '-1'],
    ['WEBHOOK_RETRY_DELAY_SCALE', 'fast'],
    ['PAYMENT_SYNC_DELAY_SCALE', '0'],
    ['PAYMENT_SYNC_DELAY_SCALE', '1.5'],
    ['WORKER_CONCURRENCY', '0'],
    ['WORKER_CONCURRENCY', '2.5'],
    ['WEBHOOK_CONCURRENCY', '0'],
    ['WEBHOOK_CONCURRENCY', '1001'],
    ['ADMIN_API_KEY', 'short'],
    ['ENCRYPTION_KEY', 'abcd'],
    ['LOG_LEVEL', 'loud'],
    ['GRAPHIQL', 'yes'],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'private'],
  ])('rejects %s=%j with a message naming the variable', (name, value) => {
    const error = configError({ [name]: value });
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message.startsWith(`${name}:`)).toBe(true);
  });

  it('says an encryption key must be 32 bytes', () => {
    expect(configError({ ENCRYPTION_KEY: 'abcd' }).message).toContain('32 bytes');
    // 31 bytes as hex is not 64 hex characters, so it is read as base64 and still rejected.
    expect(configError({ ENCRYPTION_KEY: HEX_KEY.slice(2) }).message).toContain('32 bytes');
  });

  it.each(['development', 'production', 'test'])('refuses NODE_ENV=%s without ENCRYPTION_KEY: no key comes from the source', (nodeEnv) => {
    for (const env of [{ NODE_ENV: nodeEnv }, { NODE_ENV: nodeEnv, ENCRYPTION_KEY: '' }]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/^ENCRYPTION_KEY: required \(32 bytes as 64 hex characters or base64; generate one with: openssl rand -hex 32\)$/);
    }
  });

  it.each([
    ['loopback', 'loopback'],
    ['true', 'all'],
    ['1', 'all'],
    ['false', 'none'],
    ['', 'none'],
  ])('reads WEBHOOK_ALLOW_PRIVATE_NETWORKS=%j as %s', (value, expected) => {
    expect(load({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: value }).WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(expected);
  });

  it('decodes a hex and a base64 encryption key to the same 32 bytes', () => {
    const fromHex = load({ ENCRYPTION_KEY: HEX_KEY }).encryptionKey;
    const fromBase64 = load({ ENCRYPTION_KEY: KEY_BYTES.toString('base64') }).encryptionKey;
    expect(fromHex).toEqual(KEY_BYTES);
    expect(fromBase64).toEqual(KEY_BYTES);
  });

  it('accepts an upper-case hex encryption key', () => {
    expect(load({ ENCRYPTION_KEY: HEX_KEY.toUpperCase() }).encryptionKey).toEqual(KEY_BYTES);
  });

  it('parses a fractional WEBHOOK_RETRY_DELAY_SCALE', () => {
    expect(load({ WEBHOOK_RETRY_DELAY_SCALE: '0.001' }).WEBHOOK_RETRY_DELAY_SCALE).toBe(0.001);
  });

  it('reads a rate limit as "<count>/<seconds>", and names the variable and the form when it is not one', () => {
    expect(load({}).RATE_LIMIT_FAILED_AUTH_PER_IP).toEqual({ points: 20, seconds: 300 });
    expect(load({ RATE_LIMIT_DECLINES_PER_LINK: '3/60' }).RATE_LIMIT_DECLINES_PER_LINK).toEqual({ points: 3, seconds: 60 });
    for (const value of ['20', '0/60', '20/0', '20/60/1', 'many/60', '20/9999999']) {
      expect(configError({ RATE_LIMIT_LINK_USES_PER_IP: value }).message).toMatch(/^RATE_LIMIT_LINK_USES_PER_IP: must be "<count>\/<seconds>"/);
    }
  });

  it('reads a sweep interval of 0 as off, and names the variable and the range when it is neither', () => {
    expect(load({}).SUBSCRIPTION_SWEEP_MS).toBe(30_000);
    expect(load({ SUBSCRIPTION_SWEEP_MS: '0', PAYMENT_EXPIRY_SWEEP_MS: '100' })).toMatchObject({ SUBSCRIPTION_SWEEP_MS: 0, PAYMENT_EXPIRY_SWEEP_MS: 100 });
    for (const value of ['1', '99', '3600001', '-100', '1.5', '1e3', ' ', 'often']) {
      expect(configError({ PAYMENT_EXPIRY_SWEEP_MS: value }).message).toBe('PAYMENT_EXPIRY_SWEEP_MS: must be 0 (off) or from 100 to 3600000 ms');
    }
    expect(load({ SUBSCRIPTION_SWEEP_MS: ' 3600000 ' }).SUBSCRIPTION_SWEEP_MS).toBe(3_600_000);
  });

  describe('graphiql', () => {
    it('is on by default in development', () => {
      expect(load({}).graphiql).toBe(true);
      expect(load({ NODE_ENV: 'development' }).graphiql).toBe(true);
    });

    it('is off by default in production', () => {
      expect(load({ NODE_ENV: 'production', ENCRYPTION_KEY: HEX_KEY }).graphiql).toBe(false);
    });

    it.each([
      [{ GRAPHIQL: 'false' }, false],
      [{ GRAPHIQL: '0' }, false],
      [{ NODE_ENV: 'production', ENCRYPTION_KEY: HEX_KEY, GRAPHIQL: 'true' }, true],
      [{ NODE_ENV: 'production', ENCRYPTION_KEY: HEX_KEY, GRAPHIQL: '1' }, true],
    ])('follows GRAPHIQL when it is set: %j', (env, expected) => {
      expect(load(env).graphiql).toBe(expected);
    });
  });

  describe('introspection', () => {
    it('is on by default outside production, off in production', () => {
      expect(load({}).introspection).toBe(true);
      expect(load({ NODE_ENV: 'production' }).introspection).toBe(false);
    });

    it.each([
      [{ GRAPHQL_INTROSPECTION: 'false' }, false],
      [{ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }, true],
    ])('follows GRAPHQL_INTROSPECTION when it is set: %j', (env, expected) => {
      expect(load(env).introspection).toBe(expected);
    });
  });
});
