// The dashboard's settings pages in a real Chromium (docs/dashboard.md, "Settings"): each renders at 390 and
// 1,280 px without sideways scrolling and passes axe-core's WCAG 2 A/AA rules; what a role may do is offered
// and works (a key created, revoked and rotated, a connector account added, disabled and enabled, a webhook
// URL saved and tested, the signing key rotated, a member invited), what it may not is not shown.
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BusinessProfilesDocument, ConnectorAccountsDocument, TeamMembersDocument, type TeamRole as Role } from '../gql/graphql.ts';
import { eventually, openPage, screenshot } from '../support/browser.ts';
import { dashboardShop } from '../support/dashboard.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { member, PASSWORD, uniqueEmail } from '../support/team.ts';

const AXE = new URL('../../node_modules/axe-core/axe.min.js', import.meta.url);
const SETTINGS = ['webhooks', 'connectors', 'routing', 'api-keys', 'team', 'audit'] as const;

const fixture = dashboardShop();

/** The dashboard signed in as a new member of `fixture.shop` with `role` (invited with its secret key), its cookie in the fixture.browser. */
async function signedIn(size: 'phone' | 'desktop', role: Role) {
  const opened = await openPage(fixture.browser, size);
  const session = await member(fixture.stack.api.url, fixture.shop.secret, role);
  const [name, value] = session.cookie.split('=') as [string, string];
  await opened.page.context().addCookies([{ name, value, url: fixture.stack.api.url }]);
  return { ...opened, session };
}

/** Opens a settings page and waits until it is drawn; a failure to draw fails the test with its message. */
async function openSettings(page: Page, name: string): Promise<void> {
  await page.goto(`${fixture.stack.api.url}/dashboard#/settings/${name}`);
  await eventually(() => page.evaluate(() => document.body.dataset['ready'])).toBe('true');
  expect(await page.locator('#alert').textContent()).toBe('');
}

/** Confirms the dialog the last action opened. */
async function confirm(page: Page, question: RegExp | string): Promise<void> {
  const dialog = page.locator('#confirm');
  await eventually(() => dialog.isVisible()).toBe(true);
  expect(await page.locator('#confirm-question').textContent()).toMatch(
    typeof question === 'string' ? new RegExp(`^${question.replace(/[.?*+()[\]\\]/g, '\\$&')}$`) : question,
  );
  await page.locator('#confirm-accept').click();
}

async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's Content-Security-Policy refuses an inline script tag.
  await page.evaluate(await readFile(AXE, 'utf8'));
  return page.evaluate(async () => {
    const { violations } = await (
      window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] },
    });
    return violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
  });
}

describe('the dashboard settings pages', () => {
  for (const size of ['phone', 'desktop'] as const) {
    it(`render at ${size} width without sideways scrolling and pass axe's WCAG 2 AA rules`, { timeout: 90_000 }, async () => {
      const { page, consoleErrors } = await signedIn(size, 'OWNER');
      for (const name of SETTINGS) {
        await openSettings(page, name);
        expect(await page.locator('#page h2').count(), name).toBeGreaterThan(0);
        expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), name).toBe(0);
        expect(await axeViolations(page), name).toEqual([]);
        await screenshot(page, `dashboard-settings-${name}${size === 'phone' ? '-phone' : ''}`);
      }
      expect(consoleErrors).toEqual([]);
    });
  }

  it('lets a developer create a key, shown once, that works until it is revoked', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'DEVELOPER');
    await openSettings(page, 'api-keys');
    await page.getByLabel('Name', { exact: true }).fill('Reporting');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await confirm(page, /Create the secret key “Reporting” in test mode\?/);
    const secret = page.getByLabel('The new key Reporting');
    await eventually(() => secret.isVisible()).toBe(true);
    const key = await secret.inputValue();
    expect(key).toMatch(/^sk_test_/);
    dataOf(await fixture.stack.api.as(key)(BusinessProfilesDocument, {}));

    await page.getByRole('button', { name: 'Revoke Reporting' }).click();
    await confirm(page, /Revoke Reporting/);
    await eventually(() => page.getByRole('row', { name: /Reporting/ }).textContent()).toMatch(/revoked/);
    errorOf(await fixture.stack.api.as(key)(BusinessProfilesDocument, {}), 'UNAUTHENTICATED');
  });

  it('lets a developer rotate a key: the new one shown once, the old one working until its expiry', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'DEVELOPER');
    await openSettings(page, 'api-keys');
    await page.getByLabel('Name', { exact: true }).fill('Payroll');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await confirm(page, /Create the secret key “Payroll”/);
    const secret = page.getByLabel('The new key Payroll');
    await eventually(() => secret.isVisible()).toBe(true);
    const oldKey = await secret.inputValue();

    await page.getByLabel('Old Payroll works for').selectOption('3600');
    await page.getByRole('button', { name: 'Rotate Payroll' }).click();
    await confirm(page, /The old one keeps working for 1 hour\.$/);
    await eventually(async () => (await secret.isVisible()) && (await secret.inputValue()) !== oldKey).toBe(true);
    const newKey = await secret.inputValue();
    expect(await page.locator('[data-secret=api-key-secret]').textContent()).toMatch(/The old key works until /);
    // Both work: the old one until its expiry, an hour ahead, shown in its row.
    dataOf(await fixture.stack.api.as(newKey)(BusinessProfilesDocument, {}));
    dataOf(await fixture.stack.api.as(oldKey)(BusinessProfilesDocument, {}));
    const rows = page.getByRole('row', { name: /Payroll/ });
    expect(await rows.count()).toBe(2);
    expect((await rows.allTextContents()).filter((text) => !text.includes('never'))).toHaveLength(1);
  });

  it('disables a connector account and enables it again', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'OWNER');
    await openSettings(page, 'connectors');
    const row = page.getByRole('row', { name: fixture.shop.connectorAccountId });
    await row.getByRole('button', { name: `Disable ${fixture.shop.connectorAccountId}` }).click();
    await confirm(page, /Stop routing payments/);
    await eventually(() => row.textContent()).toContain('disabled');
    const accounts = async () => dataOf(await fixture.shop.secret(ConnectorAccountsDocument, {})).connectorAccounts;
    expect((await accounts()).find((account) => account.id === fixture.shop.connectorAccountId)?.disabled).toBe(true);
    await row.getByRole('button', { name: `Enable ${fixture.shop.connectorAccountId}` }).click();
    await confirm(page, /again\?$/);
    await eventually(() => row.textContent()).toContain('enabled');
    expect((await accounts()).find((account) => account.id === fixture.shop.connectorAccountId)?.disabled).toBe(false);
  });

  it('rotates a signing key, showing the new key once and when the old one stops signing', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'DEVELOPER');
    await openSettings(page, 'webhooks');
    await page.getByLabel('Overlap in hours').fill('2');
    await page.getByRole('button', { name: 'Rotate the signing key' }).click();
    await confirm(page, /test signing key\? The old key keeps signing for 2 hours\.$/);
    const key = page.getByLabel(/^The new test signing key of /);
    await eventually(() => key.isVisible()).toBe(true);
    expect((await key.inputValue()).length).toBeGreaterThanOrEqual(32);
    expect(await page.locator(`[data-secret="signing-key-${fixture.shop.profileId}"]`).textContent()).toMatch(/The old key signs beside it until /);
    expect(await page.locator(`[data-profile-id="${fixture.shop.profileId}"]`).textContent()).toMatch(/Last rotated .* The previous key signs too until /);
  });

  it('adds a connector account from its credentials, refusing credentials that are not a JSON object', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'ADMIN');
    await openSettings(page, 'connectors');
    const before = await page.locator('#page tbody tr').count();
    const credentials = page.getByLabel('Credentials (JSON)');
    await credentials.fill('apiKey: sk');
    await page.getByRole('button', { name: 'Add the account' }).click();
    await confirm(page, /Add a sandbox account in test mode\?/);
    await eventually(() => page.locator('#alert').textContent()).toMatch(/^Credentials: must be a JSON object/);
    expect(await credentials.getAttribute('aria-invalid')).toBe('true');

    await credentials.fill('{"apiKey": "sk_sandbox_settings"}');
    await page.getByRole('button', { name: 'Add the account' }).click();
    await confirm(page, /Add a sandbox account/);
    await eventually(() => page.locator('#page tbody tr').count()).toBe(before + 1);
    expect(await page.locator('#notice').textContent()).toMatch(/^The sandbox account \w+ is added\.$/);
  });

  it('saves a webhook URL and sends a test event to it', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'DEVELOPER');
    await openSettings(page, 'webhooks');
    const url = page.getByLabel('Test webhook URL');
    expect(await url.inputValue()).toBe(fixture.shop.receiver.url);
    await url.fill(`${fixture.shop.receiver.url}?settings`);
    await page.getByRole('button', { name: 'Save the test URL' }).click();
    await confirm(page, /test events to .*\?settings\?/);
    await eventually(() => page.locator('#notice').textContent()).toMatch(/test webhook URL is saved/);
    const profile = dataOf(await fixture.shop.secret(BusinessProfilesDocument, {})).businessProfiles.find(
      (candidate) => candidate.id === fixture.shop.profileId,
    );
    expect(profile?.testWebhookUrl).toBe(`${fixture.shop.receiver.url}?settings`);

    const before = fixture.shop.receiver.received.length;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await confirm(page, /Send a test event/);
    await eventually(() => fixture.shop.receiver.received.length).toBe(before + 1);
  });

  it('lets an owner invite a member whose accept link signs them in, then change their role and remove them', { timeout: 90_000 }, async () => {
    const { page } = await signedIn('desktop', 'OWNER');
    await openSettings(page, 'team');
    const email = uniqueEmail('invited');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Role', { exact: true }).selectOption('ADMIN');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    await confirm(page, `Invite ${email} as admin?`);
    const link = page.getByLabel(`The invitation of ${email}`);
    await eventually(() => link.isVisible()).toBe(true);
    const acceptUrl = await link.inputValue();
    expect(await page.getByRole('region', { name: 'Pending invitations' }).textContent()).toContain(email);

    // The link, opened elsewhere, sets the member's password and opens the dashboard as them.
    const invited = await openPage(fixture.browser, 'phone');
    await invited.page.goto(acceptUrl.replace(/^https?:\/\/[^/]+/, fixture.stack.api.url));
    await invited.page.getByLabel('Password').fill(PASSWORD);
    await invited.page.getByRole('button', { name: 'Set password and sign in' }).click();
    await eventually(() => invited.page.locator('#user-email').textContent()).toBe(`${email} (admin)`);

    await page.reload();
    await eventually(() => page.evaluate(() => document.body.dataset['ready'])).toBe('true');
    const row = page.getByRole('row', { name: email });
    await row.getByLabel(`Role of ${email}`, { exact: true }).selectOption('VIEWER');
    await row.getByRole('button', { name: `Change the role of ${email}` }).click();
    await confirm(page, /viewer\?$/);
    await eventually(() => page.locator('#notice').textContent()).toBe(`${email} is now viewer.`);
    const members = dataOf(await fixture.shop.secret(TeamMembersDocument, {})).teamMembers;
    expect(members.find((candidate) => candidate.email === email)?.role).toBe('VIEWER');
    await row.getByRole('button', { name: `Remove ${email}` }).click();
    await confirm(page, /Remove/);
    await eventually(() => page.getByRole('row', { name: email }).count()).toBe(0);

    // The audit log names who did it.
    await openSettings(page, 'audit');
    const log = await page.getByRole('region', { name: 'Audit log' }).textContent();
    expect(log).toMatch(/removeTeamMember.*ok/);
    expect(log).toMatch(/inviteTeamMember/);
  });

  it('shows a viewer no control that changes anything', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('desktop', 'VIEWER');
    for (const name of SETTINGS) {
      await openSettings(page, name);
      expect(await page.locator('#page button, #page form').count(), name).toBe(0);
      expect(await page.locator('#page input:not([readonly]), #page select, #page textarea').count(), name).toBe(0);
    }
  });
});
