// The dashboard a team runs its business from (docs/dashboard.md), end to end in Chromium: a team member signs
// in through the login page, finds a payment by its customer's email, refunds part of it through the
// confirmation dialog, sees the refund's webhook delivered, and sends a failed delivery again with Retry now
// once the receiver is back.
import { describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument } from '../gql/graphql.ts';
import { eventually, openPage, screenshot } from '../support/browser.ts';
import { dashboardReady, dashboardShop, openDashboardPage, signIn, teamUser } from '../support/dashboard.ts';
import { dataOf } from '../support/graphql-client.ts';
import { answer } from '../support/receiver.ts';
import { card, eventReaching } from '../support/webhooks.ts';

const fixture = dashboardShop();

async function paid(amount: number, email: string) {
  const created = dataOf(await fixture.shop.secret(CreatePaymentDocument, { input: { amount, currency: 'USD', email } })).createPayment;
  return dataOf(await fixture.shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }))
    .confirmPayment;
}

describe('the dashboard, as a team uses it', () => {
  it('finds a payment by email, refunds part of it, sees the refund delivered, and retries a failed delivery', { timeout: 120_000 }, async () => {
    const email = `ada-${Date.now()}@customers.example`;
    const [wanted] = [await paid(5000, email), await paid(7000, 'grace@customers.example')];
    await eventReaching(fixture.shop, wanted!.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');

    const { page, consoleErrors } = await openPage(fixture.browser, 'desktop');
    const admin = await teamUser(fixture.stack.api.url, fixture.shop, 'ADMIN');
    await signIn(page, fixture.stack.api.url, admin.email, admin.password);

    // Found by the customer's email, in a link that reproduces the search.
    await page.getByLabel('Search').fill(email);
    await page.getByRole('button', { name: 'Find' }).click();
    await eventually(() => page.locator('#payments-body tr').count()).toBe(1);
    expect(page.url()).toBe(`${fixture.stack.api.url}/dashboard#/payments?q=${encodeURIComponent(email)}`);
    await screenshot(page, 'dashboard-payments');
    await page.locator('#payments-body').getByRole('link', { name: wanted!.id }).click();
    await eventually(() => page.getByRole('heading', { name: `Payment ${wanted!.id}` }).isVisible()).toBe(true);

    // A partial refund, confirmed in the dialog (Cancel first: nothing happens).
    await page.getByLabel(/Amount to refund/).fill('12.50');
    await page.getByLabel('Reason (optional)').fill('Damaged in transit');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await eventually(() => dialog.textContent()).toContain(`Refund 12.50 USD of payment ${wanted!.id} to the customer?`);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('confirm-accept');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Refund');
    await page.getByRole('button', { name: 'Refund', exact: true }).click();
    await dialog.getByRole('button', { name: 'Refund 12.50 USD' }).click();
    await eventually(() => page.getByRole('status').first().textContent()).toBe('A refund of 12.50 USD was requested.');
    const refunds = page.locator('section:has(> h2:text-is("Refunds")) tbody tr');
    await eventually(() => refunds.allTextContents()).toEqual([expect.stringMatching(/12\.50 USDsucceededDamaged in transit/)]);
    await eventually(() => page.locator('#summary').textContent()).toContain('refunded 12.50 USD');

    // The refund's webhook (its event is the refund's), delivered: on the payment's page once read again.
    const refundId = await refunds.first().locator('td').first().textContent();
    const refundEvent = await eventReaching(fixture.shop, refundId!, 'REFUND_SUCCEEDED', 'DELIVERED');
    await page.reload();
    await dashboardReady(page);
    await eventually(() => page.locator(`#deliveries tr[data-event-id="${refundEvent.id}"] .badge`).textContent()).toBe('delivered');
    await screenshot(page, 'dashboard-payment');

    // A delivery that failed every automatic attempt (the receiver answered 500), sent again with Retry now.
    fixture.shop.receiver.handler = answer(500);
    const failing = await paid(3000, 'failing@customers.example');
    const failed = await eventReaching(fixture.shop, failing.id, 'PAYMENT_SUCCEEDED', 'FAILED', 60_000);
    fixture.shop.receiver.handler = answer(204);
    await openDashboardPage(page, 'events?delivered=no');
    const row = page.locator(`tr[data-event-id="${failed.id}"]`);
    await eventually(() => row.locator('.badge').textContent()).toBe('failed');
    expect(await row.textContent()).toContain('500');
    await screenshot(page, 'dashboard-events');
    await row.getByRole('button', { name: /Retry now/ }).click();
    await eventually(() => page.locator('#notice').textContent()).toBe(`Event ${failed.id} was sent again.`);
    await eventReaching(fixture.shop, failing.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    await openDashboardPage(page, 'events');
    await eventually(() => page.locator(`tr[data-event-id="${failed.id}"] .badge`).textContent()).toBe('delivered');
    // Delivered now, it leaves the list of undelivered events.
    await openDashboardPage(page, 'events?delivered=no');
    expect(await page.locator(`tr[data-event-id="${failed.id}"]`).count()).toBe(0);
    expect(consoleErrors).toEqual([]);
  });
});
