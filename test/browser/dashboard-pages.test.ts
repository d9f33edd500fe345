// Every page of the dashboard at a phone's (390 px) and a desktop's (1,280 px) width: no sideways scrolling,
// no axe-core WCAG 2 A/AA violation, every control reached by Tab (docs/dashboard.md). And what a role sees
// and may do on a payment: money moves only for owners and admins, each confirmed, the API's refusal shown in
// its own words.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument } from '../gql/graphql.ts';
import { eventually, openPage, screenshot } from '../support/browser.ts';
import { dashboardReady, dashboardShop, expectUsable, openDashboardPage, signIn, teamUser } from '../support/dashboard.ts';
import { dataOf } from '../support/graphql-client.ts';
import { card, eventReaching, paidPayment } from '../support/webhooks.ts';

const fixture = dashboardShop();
let paymentId: string;

beforeAll(async () => {
  paymentId = (await paidPayment(fixture.shop)).id;
  await eventReaching(fixture.shop, paymentId, 'PAYMENT_SUCCEEDED', 'DELIVERED');
});

async function signedIn(
  role: 'OWNER' | 'ADMIN' | 'DEVELOPER' | 'VIEWER',
  size: 'phone' | 'desktop' = 'desktop',
): Promise<{ page: Page; consoleErrors: string[] }> {
  const opened = await openPage(fixture.browser, size);
  const user = await teamUser(fixture.stack.api.url, fixture.shop, role);
  await signIn(opened.page, fixture.stack.api.url, user.email, user.password);
  return opened;
}

describe('the dashboard pages', () => {
  const PATHS = [
    'payments',
    'payments/{payment}',
    'events',
    'balance',
    'settings/webhooks',
    'settings/connectors',
    'settings/routing',
    'settings/api-keys',
    'settings/team',
    'settings/audit',
  ];
  it.each(PATHS)('%s reads at 390 and 1280 px, passes axe and is reached by Tab', { timeout: 90_000 }, async (path) => {
    const { page, consoleErrors } = await signedIn('OWNER');
    await openDashboardPage(page, path.replace('{payment}', paymentId));
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await expectUsable(page);
    }
    if (path === 'payments') await screenshot(page, 'dashboard-payments-phone');
    expect(consoleErrors).toEqual([]);
  });

  it('keeps the filters in the address: a link reproduces them', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('VIEWER');
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    await page.getByRole('button', { name: 'Find' }).click();
    await eventually(() => page.evaluate(() => location.hash)).toBe('#/payments?status=SUCCEEDED');
    await dashboardReady(page);
    await page.reload();
    await dashboardReady(page);
    expect(await page.getByLabel('Status').inputValue()).toBe('SUCCEEDED');
    expect(await page.locator(`#payments-body tr[data-payment-id="${paymentId}"]`).count()).toBe(1);
    await page.getByLabel('Status').selectOption('FAILED');
    await page.getByRole('button', { name: 'Find' }).click();
    await eventually(() => page.locator('#payments-body tr').count()).toBe(0);
  });

  it('shows a viewer no money moves and no Retry now', { timeout: 60_000 }, async () => {
    const { page } = await signedIn('VIEWER');
    await openDashboardPage(page, `payments/${paymentId}`);
    expect(await page.locator('#actions').textContent()).toContain('Your role (viewer) may not move money.');
    for (const name of ['Refund', 'Capture', 'Cancel payment', 'Sync with processor', /Retry now/])
      expect(await page.getByRole('button', { name }).count()).toBe(0);
  });

  it('captures part of a manual payment, cancels another, syncs, and shows the API refusing too large a refund', { timeout: 90_000 }, async () => {
    const manual = async () => {
      const created = dataOf(
        await fixture.shop.secret(CreatePaymentDocument, { input: { amount: 8000, currency: 'USD', captureMethod: 'MANUAL' } }),
      ).createPayment;
      return dataOf(await fixture.shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }))
        .confirmPayment;
    };
    const [toCapture, toCancel] = [await manual(), await manual()];
    expect(toCapture.status).toBe('REQUIRES_CAPTURE');
    const { page, consoleErrors } = await signedIn('ADMIN', 'phone');
    const confirm = async (label: string) => page.getByRole('dialog').getByRole('button', { name: label }).click();

    await openDashboardPage(page, `payments/${toCapture.id}`);
    await page.getByLabel(/Amount to capture/).fill('30.00');
    await page.getByRole('button', { name: 'Capture', exact: true }).click();
    await confirm('Capture 30.00 USD');
    await eventually(() => page.locator('#summary .badge').textContent()).toBe('partially captured');

    // More than is left to refund (30.00 captured): the API's own refusal, in the alert region.
    await page.getByLabel(/Amount to refund/).fill('50.00');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await confirm('Refund 50.00 USD');
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/\(INVALID_INPUT\)$/);

    await page.getByRole('button', { name: 'Sync with processor' }).click();
    await confirm('Sync');
    await eventually(() => page.locator('#notice').textContent()).toBe(`Payment ${toCapture.id} was synced with its processor.`);

    await openDashboardPage(page, `payments/${toCancel.id}`);
    await page.getByRole('button', { name: 'Cancel payment' }).click();
    await confirm('Cancel payment');
    await eventually(() => page.locator('#summary .badge').textContent()).toBe('cancelled');
    expect(await page.getByRole('button', { name: 'Cancel payment' }).count()).toBe(0);
    // The one refusal: GraphQL answers it 400, which Chromium logs.
    expect(consoleErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
