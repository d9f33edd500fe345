// Which merchant webhook URLs are acceptable when they are configured. (Where the URL resolves to is checked
// again at connect time by the delivery worker, since DNS can change after configuration.)
import type { Mode } from './api-keys.ts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** `*.example.com` matches any subdomain of example.com, not example.com itself. */
export function hostMatches(host: string, pattern: string): boolean {
  const normalisedHost = host.toLowerCase();
  const normalisedPattern = pattern.toLowerCase();
  if (normalisedPattern.startsWith('*.')) return normalisedHost.endsWith(normalisedPattern.slice(1));
  return normalisedHost === normalisedPattern;
}

/** Returns the rule the URL breaks, or null when it is acceptable for `mode`. */
export function webhookUrlProblem(url: string, mode: Mode, liveAllowedHosts: readonly string[]): string | null {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must use https (or http in test mode)';
  if (parsed.username || parsed.password) return 'must not contain credentials';
  if (url.includes('#')) return 'must not contain a fragment';
  if (mode === 'LIVE') {
    if (parsed.protocol !== 'https:') return 'must use https in live mode';
    if (!liveAllowedHosts.some((pattern) => hostMatches(parsed.hostname, pattern))) {
      return `host ${parsed.hostname} is not on this merchant's live webhook allowlist (the operator adds it)`;
    }
  }
  return null;
}
