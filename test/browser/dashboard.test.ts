// The live dashboard in a real Chromium: payments made through the API appear and change without a reload,
// and a payment's detail shows its attempts, routing reason, history and webhook deliveries, whose retry button
// sends again; the profile's active routing algorithm is shown.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, ConnectorHealthDocument, CreatePaymentDocument, SetRoutingAlgorithmDocument } from '../gql/graphql.ts';
import { eventually, launchBrowser, openPage, screenshot } from '../support/browser.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { card, eventReaching, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let browser: Browser;
let shop: Shop;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack(), launchBrowser()]);
  shop = await shopWithReceiver(stack);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await shop?.receiver.close();
});

describe('the live dashboard', () => {
  it('shows a new payment and its status change without a reload, then its attempts, history and deliveries', { timeout: 90_000 }, async () => {
    const { page, consoleErrors } = await openPage(browser, 'desktop');
    await page.goto(`${stack.api.url}/dashboard#secret_key=${shop.secretKey}`);
    await eventually(() => page.evaluate(() => document.body.dataset['ready'])).toBe('true');
    expect(page.url()).toBe(`${stack.api.url}/dashboard`); // the key left the address bar
    expect(await page.locator('#payments-body tr').count()).toBe(0);

    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4200, currency: 'USD' } })).createPayment;
    const row = page.locator(`tr[data-payment-id="${created.id}"]`);
    await eventually(() => row.locator('[data-column=status]').textContent()).toBe('requires payment method');
    expect(await row.locator('td.amount').textContent()).toBe('42.00 USD');

    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    await eventually(() => row.locator('[data-column=status]').textContent()).toBe('succeeded');
    expect(await page.locator('#payments-body tr').count()).toBe(1);

    // The charts count the last hour's payments and delivery attempts once the event was delivered.
    await eventReaching(shop, created.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    expect(await page.locator('#routing-algorithms').textContent()).toContain('no algorithm, the default connector order');
    // An algorithm set after the payment was routed: the profile shows it, the payment keeps its own decision.
    const [account] = dataOf(await shop.secret(ConnectorHealthDocument, {})).connectorAccounts;
    dataOf(await shop.secret(SetRoutingAlgorithmDocument, { input: { profileId: shop.profileId, algorithm: { priority: [account!.id] } } }));
    await page.reload();
    await eventually(() => page.locator('#routing-algorithms').textContent()).toMatch(/: Priority \(since /);
    await eventually(() => page.locator('#chart-statuses').textContent()).toContain('succeeded1');
    await eventually(() => page.locator('#webhook-rate').textContent()).toMatch(/^100 % of \d+ delivery attempts got a 2xx\.$/);

    await row.getByRole('button', { name: created.id }).click();
    const detail = page.locator('#detail');
    await eventually(() => detail.getByRole('heading', { name: `Payment ${created.id}` }).isVisible()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('detail-heading');
    const text = await detail.textContent();
    expect(text).toContain('Attempts');
    expect(text).toContain('charged');
    expect(await detail.locator('#routing-reason').textContent()).toBe(
      "Priority: No routing algorithm is set, so the eligible accounts go in the profile's default order.",
    );
    expect(text).toMatch(/requires payment method.*succeeded/s);
    expect(text).toContain('payment_succeeded');
    expect(await detail.locator('.badge.status-delivered').count()).toBeGreaterThan(0);
    await screenshot(page, 'dashboard');

    // Retry a delivery by hand: one more attempt reaches the receiver.
    const before = shop.receiver.received.length;
    await detail.getByRole('button', { name: 'Retry now' }).first().click();
    await eventually(() => shop.receiver.received.length).toBe(before + 1);
    await eventually(() => detail.textContent()).toMatch(/#2 204/);
    expect(consoleErrors).toEqual([]);
  });

  it('asks for a secret key, and names the rule a wrong one breaks', async () => {
    const { page } = await openPage(browser, 'phone');
    await page.goto(`${stack.api.url}/dashboard`);
    await page.getByLabel('Secret API key').fill(shop.publishableKey);
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toBe('Secret key: must start with sk_test_ or sk_live_.');
    await page.getByLabel('Secret API key').fill(shop.secretKey);
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await eventually(() => page.evaluate(() => document.body.dataset['ready'])).toBe('true');
    expect(await page.locator('#payments-body tr').count()).toBeGreaterThan(0);
  });
});
