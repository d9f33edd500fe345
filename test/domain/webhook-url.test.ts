import { describe, expect, it } from 'vitest';
import type { Mode } from '../../src/kernel/api-keys.ts';
import { hostMatches, MAX_WEBHOOK_URL_LENGTH, webhookUrlProblem } from '../../src/kernel/webhook-url.ts';

const allowlist = ['*.example.com', 'hooks.merchant.test'];

/** An https URL on an allowed host that is exactly `length` characters long. */
function urlOfLength(length: number): string {
  const base = 'https://a.example.com/';
  return base + 'p'.repeat(length - base.length);
}

// [url, mode, expected]: null when acceptable, otherwise a pattern the problem text must match.
const cases: [string, Mode, RegExp | null][] = [
  // Acceptable
  ['https://a.example.com/hooks', 'LIVE', null],
  ['https://a.b.example.com/hooks', 'LIVE', null],
  ['https://hooks.merchant.test/in?x=1', 'LIVE', null],
  ['https://HOOKS.Merchant.Test/in', 'LIVE', null],
  ['https://a.example.com:8443/hooks', 'LIVE', null],
  ['https://anywhere.org/hooks', 'TEST', null],
  ['http://anywhere.org/hooks', 'TEST', null],
  ['http://localhost:3000/hooks', 'TEST', null],
  [urlOfLength(MAX_WEBHOOK_URL_LENGTH), 'LIVE', null],

  // http only in test mode
  ['http://a.example.com/hooks', 'LIVE', /https in live mode/],

  // Live hosts must be on the allowlist
  ['https://example.com/hooks', 'LIVE', /allowlist/],
  ['https://badexample.com/hooks', 'LIVE', /allowlist/],
  ['https://example.com.evil.org/hooks', 'LIVE', /allowlist/],
  ['https://other.org/hooks', 'LIVE', /allowlist/],
  ['https://x.hooks.merchant.test/in', 'LIVE', /allowlist/],

  // Credentials and fragments
  ['https://user:pass@a.example.com/hooks', 'LIVE', /credentials/],
  ['https://user@a.example.com/hooks', 'TEST', /credentials/],
  ['http://:pass@a.example.com/hooks', 'TEST', /credentials/],
  ['https://a.example.com/hooks#frag', 'LIVE', /fragment/],
  ['https://a.example.com/hooks#frag', 'TEST', /fragment/],
  ['https://a.example.com/hooks#', 'TEST', /fragment/], // an empty fragment is still a fragment

  // Other schemes
  ['ftp://a.example.com/hooks', 'TEST', /must use https/],
  ['ftp://a.example.com/hooks', 'LIVE', /must use https/],
  ['javascript:alert(1)', 'TEST', /must use https/],
  ['file:///etc/passwd', 'TEST', /must use https/],
  ['ws://a.example.com/hooks', 'TEST', /must use https/],

  // Not absolute URLs
  ['/hooks', 'TEST', /absolute URL/],
  ['a.example.com/hooks', 'LIVE', /absolute URL/],
  ['//a.example.com/hooks', 'TEST', /absolute URL/],
  ['', 'TEST', /absolute URL/],

  // Too long (checked before anything else)
  [urlOfLength(MAX_WEBHOOK_URL_LENGTH + 1), 'LIVE', /at most 2048/],
  [urlOfLength(MAX_WEBHOOK_URL_LENGTH + 1), 'TEST', /at most 2048/],
];

describe('webhookUrlProblem', () => {
  it.each(cases)('%s in %s mode → %s', (url, mode, expected) => {
    const problem = webhookUrlProblem(url, mode, allowlist);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it('rejects every live host when the allowlist is empty', () => {
    expect(webhookUrlProblem('https://a.example.com/hooks', 'LIVE', [])).toMatch(/allowlist/);
    expect(webhookUrlProblem('https://a.example.com/hooks', 'TEST', [])).toBeNull();
  });

  it('the length limit is 2048', () => {
    expect(MAX_WEBHOOK_URL_LENGTH).toBe(2048);
  });
});

describe('hostMatches', () => {
  it.each([
    ['a.example.com', '*.example.com', true],
    ['a.b.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['badexample.com', '*.example.com', false],
    ['example.com.evil.org', '*.example.com', false],
    ['example.com', 'example.com', true],
    ['a.example.com', 'example.com', false],
    ['A.Example.COM', '*.example.com', true],
    ['a.example.com', '*.EXAMPLE.com', true],
    ['Hooks.Merchant.Test', 'hooks.MERCHANT.test', true],
    ['hooks.merchant.test', 'hooks.merchant.tes', false],
  ])('%s against %s → %s', (host, pattern, expected) => {
    expect(hostMatches(host, pattern)).toBe(expected);
  });
});
