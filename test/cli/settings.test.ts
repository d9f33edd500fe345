// Where the CLI and the server SDK send the secret key (docs/cli.md, "Security"; docs/server-sdk.md): over
// https, or plain http to this machine only (localhost, 127.0.0.0/8, ::1), never in clear text across a network.
import { describe, expect, it } from 'vitest';
import { Payments } from '../../packages/node/src/index.ts';
import { settingsFrom } from '../../packages/node/src/cli/settings.ts';

const KEY = 'sk_test_abc123';
const ACCEPTED = [
  'https://pay.example.com',
  'https://10.0.0.5:8443',
  'http://localhost:4000',
  'http://127.0.0.1:4000',
  'http://127.8.9.10',
  'http://[::1]:4000',
];
const REFUSED = ['http://pay.example.com', 'http://10.0.0.5:4000', 'http://192.168.1.2', 'http://localhost.example.com', 'http://[::2]', 'http://128.0.0.1'];

describe('the base URL of the secret key', () => {
  it.each(ACCEPTED)('takes %s', (baseUrl) => {
    expect(settingsFrom({ 'base-url': baseUrl }, { PAYMENTS_API_KEY: KEY }).baseUrl).toBe(baseUrl);
    expect(() => new Payments({ apiKey: KEY, baseUrl })).not.toThrow();
  });

  it.each(REFUSED)('refuses %s, naming the option', (baseUrl) => {
    expect(() => settingsFrom({ 'base-url': baseUrl }, { PAYMENTS_API_KEY: KEY })).toThrow(/--base-url must be https/);
    expect(() => settingsFrom({}, { PAYMENTS_API_KEY: KEY, PAYMENTS_BASE_URL: baseUrl })).toThrow(/must be https/);
    expect(() => new Payments({ apiKey: KEY, baseUrl })).toThrow(/baseUrl must be https/);
  });
});
