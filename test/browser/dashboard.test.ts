// The live dashboard in a real Chromium, signed in as a team member: payments made through the API appear and
// change without a reload, and a payment's page shows its attempts, routing reason, history and webhook
// deliveries, whose retry button sends again. A platform sees its money: its balance, its ledger page by page,
// a split payment's fee, splits and entries, and its connected merchants' balances. Without a session the
// dashboard sends the reader to its login page, and a key in the address is no longer read.
import { describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, ConnectorHealthDocument, CreatePaymentDocument, SetRoutingAlgorithmDocument } from '../gql/graphql.ts';
import { eventually, openPage } from '../support/browser.ts';
import { dashboardShop, openDashboardPage, signIn, teamUser } from '../support/dashboard.ts';
import { dataOf } from '../support/graphql-client.ts';
import { actingClient, connectMerchant, createPlatform } from '../support/platforms.ts';
import { addConnectorAccount } from '../support/stack.ts';
import { liveChannel, untilLive } from '../support/subscriptions.ts';
import { card, eventReaching } from '../support/webhooks.ts';

const fixture = dashboardShop();

describe('the live dashboard', () => {
  it('shows a new payment and its status change without a reload, then its attempts, history and deliveries', { timeout: 90_000 }, async () => {
    const { page, consoleErrors } = await openPage(fixture.browser, 'desktop');
    const user = await teamUser(fixture.stack.api.url, fixture.shop, 'ADMIN');
    await signIn(page, fixture.stack.api.url, user.email, user.password);
    expect(page.url()).toBe(`${fixture.stack.api.url}/dashboard#/payments`);
    expect(await page.locator('#payments-body tr').count()).toBe(0);
    await untilLive(fixture.stack.env, liveChannel.profilePayments(fixture.shop.profileId));

    const created = dataOf(await fixture.shop.secret(CreatePaymentDocument, { input: { amount: 4200, currency: 'USD' } })).createPayment;
    const row = page.locator(`tr[data-payment-id="${created.id}"]`);
    await eventually(() => row.locator('[data-column=status]').textContent()).toBe('requires payment method');
    expect(await row.locator('td.amount').textContent()).toBe('42.00 USD');

    dataOf(await fixture.shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    await eventually(() => row.locator('[data-column=status]').textContent()).toBe('succeeded');
    expect(await page.locator('#payments-body tr').count()).toBe(1);

    // The charts count the last hour's payments and delivery attempts once the event was delivered.
    await eventReaching(fixture.shop, created.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    // An algorithm set after the payment was routed: the payment keeps its own decision.
    const [account] = dataOf(await fixture.shop.secret(ConnectorHealthDocument, {})).connectorAccounts;
    dataOf(await fixture.shop.secret(SetRoutingAlgorithmDocument, { input: { profileId: fixture.shop.profileId, algorithm: { priority: [account!.id] } } }));
    await page.reload();
    await eventually(() => page.locator('#chart-statuses').textContent()).toContain('succeeded1');
    await eventually(() => page.locator('#webhook-rate').textContent()).toMatch(/^100 % of \d+ delivery attempts got a 2xx\.$/);

    await row.getByRole('link', { name: created.id }).click();
    const detail = page.locator('#page');
    await eventually(() => detail.getByRole('heading', { name: `Payment ${created.id}` }).isVisible()).toBe(true);
    expect(page.url()).toBe(`${fixture.stack.api.url}/dashboard#/payments/${created.id}`);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('page-title');
    const text = await detail.textContent();
    expect(text).toContain('Attempts');
    expect(text).toContain('charged');
    expect(await detail.locator('#routing-reason').textContent()).toBe(
      "Priority: No routing algorithm is set, so the eligible accounts go in the profile's default order.",
    );
    expect(text).toMatch(/requires payment method.*succeeded/s);
    expect(text).toContain('payment_succeeded');
    expect(text).toMatch(/Ledger.*capture.*merchant\+42\.00 USD/s);
    expect(await detail.locator('.badge.status-delivered').count()).toBeGreaterThan(0);

    // Retry a delivery by hand: one more attempt reaches the receiver.
    const before = fixture.shop.receiver.received.length;
    await detail.getByRole('button', { name: 'Retry now' }).first().click();
    await eventually(() => fixture.shop.receiver.received.length).toBe(before + 1);
    await eventually(() => detail.locator('#deliveries').textContent()).toMatch(/#2 204/);
    expect(consoleErrors).toEqual([]);
  });

  it("shows a platform its balance, its ledger page by page, a split payment's fee and splits, and its connected merchants", { timeout: 90_000 }, async () => {
    const platform = await createPlatform(fixture.stack.api, 'Dashboard platform');
    // Names are data: shown as text, never as markup.
    const hostileName = '<img src=x onerror="document.body.dataset.pwned=1">';
    const [sellerA, sellerB] = await Promise.all([
      connectMerchant(fixture.stack.api, platform, hostileName),
      connectMerchant(fixture.stack.api, platform, 'Seller B'),
    ]);
    const asPlatform = actingClient(fixture.stack.api, platform.secretKey);
    await addConnectorAccount(fixture.stack, { secret: asPlatform }, 'sandbox');
    const pay = async (input: { amount: number; applicationFeeAmount: number; splits?: { merchantId: string; amount: number }[] }) =>
      dataOf(await asPlatform(CreatePaymentDocument, { input: { currency: 'USD', confirm: true, paymentMethodData: card(), ...input } })).createPayment;
    // 10 fee-only payments (the platform's own share and its fee: 2 entries each), then a split payment (the fee only):
    // 21 entries, one more than the ledger's first page.
    for (let n = 0; n < 10; n++) expect((await pay({ amount: 1000, applicationFeeAmount: 100 })).status).toBe('SUCCEEDED');
    const split = await pay({
      amount: 10_000,
      applicationFeeAmount: 500,
      splits: [
        { merchantId: sellerA.id, amount: 6000 },
        { merchantId: sellerB.id, amount: 3500 },
      ],
    });
    expect(split.status).toBe('SUCCEEDED');

    const { page, consoleErrors } = await openPage(fixture.browser, 'desktop');
    const user = await teamUser(fixture.stack.api.url, { secret: asPlatform }, 'VIEWER');
    await signIn(page, fixture.stack.api.url, user.email, user.password);
    await openDashboardPage(page, 'balance');
    expect(await page.locator('#balance tbody').textContent()).toBe('USD105.00 USD0.00 USD');

    const ledgerRows = page.locator('#ledger tbody tr');
    expect(await ledgerRows.count()).toBe(20);
    const newest = await ledgerRows.first().locator('td').allTextContents();
    expect(newest.slice(1)).toEqual(['capture', 'application fee', '+5.00 USD', split.id, split.id]);
    await page.getByRole('button', { name: 'More ledger entries' }).click();
    await eventually(() => ledgerRows.count()).toBe(21);
    expect(await page.getByRole('button', { name: 'More ledger entries' }).isHidden()).toBe(true);

    const connected = page.locator('#connected-merchants tbody tr');
    expect(await connected.count()).toBe(2);
    expect(await page.locator(`#connected-merchants tr:has-text("${sellerA.id}") td`).allTextContents()).toEqual([
      hostileName,
      sellerA.id,
      'USD',
      '60.00 USD',
      '0.00 USD',
    ]);
    expect(await page.locator(`#connected-merchants tr:has-text("${sellerB.id}") td`).allTextContents()).toEqual([
      'Seller B',
      sellerB.id,
      'USD',
      '35.00 USD',
      '0.00 USD',
    ]);
    expect(await page.locator('#connected-merchants img').count()).toBe(0);

    await openDashboardPage(page, 'payments');
    await page.locator(`tr[data-payment-id="${split.id}"]`).getByRole('link', { name: split.id }).click();
    const detail = page.locator('#page');
    await eventually(() => detail.getByRole('heading', { name: `Payment ${split.id}` }).isVisible()).toBe(true);
    expect(await detail.locator('#summary').textContent()).toContain(' · platform fee 5.00 USD');
    const rowsAfter = (heading: string) => detail.locator(`section:has(> h2:text-is("${heading}")) tbody tr`);
    expect(await rowsAfter('Splits').allTextContents()).toEqual([`${sellerA.id}60.00 USD`, `${sellerB.id}35.00 USD`]);
    expect(await rowsAfter('Ledger').count()).toBe(1);
    expect((await rowsAfter('Ledger').locator('td').allTextContents()).slice(1)).toEqual(['capture', 'application fee', '+5.00 USD', split.id, split.id]);
    expect(await page.evaluate(() => document.body.dataset['pwned'])).toBeUndefined();
    expect(consoleErrors).toEqual([]);
  });

  it('sends a reader without a session to the login page, and reads no key from the address', async () => {
    const { page } = await openPage(fixture.browser, 'phone');
    await page.goto(`${fixture.stack.api.url}/dashboard#secret_key=${fixture.shop.secretKey}`);
    await page.waitForURL(`${fixture.stack.api.url}/dashboard/login`);
    expect(await page.getByLabel('Email').isVisible()).toBe(true);
  });
});
