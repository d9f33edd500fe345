// GraphiQL in a real Chromium: the page where a developer pastes a secret key runs only the script it
// carries (its Content-Security-Policy holds it to that), loads nothing from another host, and works.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.ts';
import { eventually, launchBrowser, openPage } from '../support/browser.ts';

let api: TestApi;
let browser: Browser;

beforeAll(async () => {
  [api, browser] = await Promise.all([startTestApi(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('GraphiQL', () => {
  it('renders and loads the schema under its policy, with every request to this origin', { timeout: 90_000 }, async () => {
    const { page, consoleErrors } = await openPage(browser, 'desktop');
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    const schemaLoaded = page.waitForResponse(
      (response) => response.request().method() === 'POST' && (response.request().postData() ?? '').includes('__schema'),
    );
    const response = await page.goto(`${api.url}/graphql`);
    expect((await schemaLoaded).status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
    await eventually(() => page.locator('.graphiql-container').count()).toBeGreaterThan(0);
    // The editor is up: its workers started and it shows the default query text.
    await eventually(() => page.locator('.graphiql-editors').innerText(), 30_000).toMatch(/\S/);
    const elsewhere = requests.filter((url) => !url.startsWith(`${api.url}/`) && !url.startsWith('blob:') && !url.startsWith('data:'));
    expect(elsewhere).toEqual([]);
    expect(consoleErrors.filter((message) => /Content Security Policy|Refused to/i.test(message))).toEqual([]);
  });
});
