// Where the CLI finds its API key and the service (flags first, then the environment), and the rule that it
// only ever works with a test secret key (docs/cli.md, "Security"): it creates payments and forwards events,
// which must never touch live money or a live endpoint.
import { assertKeySafeBaseUrl } from '../base-url.ts';

/** A command line the CLI cannot run: printed with the usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Something the CLI will not do (a live key, an event the sandbox cannot cause): one line saying why. */
export class Refusal extends Error {
  override name = 'Refusal';
}

export interface Settings {
  apiKey: string;
  baseUrl: string;
}

const TEST_SECRET_KEY = /^sk_test_[0-9A-Za-z]+$/;

export function settingsFrom(flags: { 'api-key'?: string; 'base-url'?: string }, env: NodeJS.ProcessEnv): Settings {
  const apiKey = flags['api-key'] ?? env['PAYMENTS_API_KEY'];
  if (!apiKey) throw new UsageError('an API key is required: --api-key sk_test_… or PAYMENTS_API_KEY');
  if (apiKey.startsWith('sk_live_') || apiKey.startsWith('pk_live_')) {
    throw new Refusal('refused: that is a live key; payments listen and trigger take a test secret key (sk_test_…) only');
  }
  if (!TEST_SECRET_KEY.test(apiKey)) throw new UsageError('--api-key must be a test secret key (sk_test_…)');
  const baseUrl = flags['base-url'] ?? env['PAYMENTS_BASE_URL'];
  if (!baseUrl) throw new UsageError('the service URL is required: --base-url https://… or PAYMENTS_BASE_URL');
  try {
    assertKeySafeBaseUrl(baseUrl, flags['base-url'] === undefined ? 'PAYMENTS_BASE_URL' : '--base-url');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { apiKey, baseUrl: baseUrl.replace(/\/$/, '') };
}
