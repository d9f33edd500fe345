// The hosted checkout in a real Chromium against the real API, sandbox and worker: what a customer sees and
// does, from the merchant's redirect to the merchant's return page.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePaymentDocument, CreatePaymentLinkDocument, PaymentDocument, PaymentLinkDocument } from '../gql/graphql.ts';
import { eventually, launchBrowser, openPage, screenshot, startShopSite } from '../support/browser.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let browser: Browser;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let site: Awaited<ReturnType<typeof startShopSite>>;

beforeAll(async () => {
  [stack, browser, site] = await Promise.all([startStack(), launchBrowser(), startShopSite()]);
  shop = await merchantWithSandbox(stack);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await stack?.close();
});

/** What the merchant's backend does: create the payment, then send the customer to the checkout. */
async function checkoutFor(input: { amount?: number; authenticationType?: 'THREE_DS' } = {}) {
  const payment = dataOf(
    await shop.secret(CreatePaymentDocument, {
      input: { amount: input.amount ?? 2599, currency: 'EUR', description: 'Two mugs', returnUrl: site.url, ...input },
    }),
  ).createPayment;
  const url = `${stack.api.url}/checkout#${new URLSearchParams({ client_secret: payment.clientSecret, publishable_key: shop.publishableKey })}`;
  return { payment, url };
}

async function fillCard(page: Page, number: string, cvc = '123') {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry month (MM)').fill('12');
  await page.getByLabel('Expiry year (YYYY)').fill(String(new Date().getUTCFullYear() + 3));
  await page.getByLabel('CVC', { exact: true }).fill(cvc);
}

const paymentNow = async (id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment;

/** Whether all of the element is on screen (in the viewport, not just somewhere on the page), to the pixel. */
async function onScreen(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const viewport = page.viewportSize()!;
  return box !== null && box.height > 0 && Math.round(box.y) >= 0 && Math.round(box.y + box.height) <= viewport.height;
}

describe('the hosted checkout', () => {
  it('takes a newcomer’s card and lands on return_url with status=succeeded', async () => {
    const { payment, url } = await checkoutFor();
    const { page, consoleErrors } = await openPage(browser, 'phone');
    await page.goto(url);
    await eventually(() => page.locator('#amount').textContent()).toBe('25.99 EUR');
    expect(await page.locator('#description').textContent()).toBe('Two mugs');
    // The credentials leave the address bar (and so the history and any screenshot of it).
    expect(page.url()).toBe(`${stack.api.url}/checkout`);
    await fillCard(page, '4242 4242 4242 4242');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await screenshot(page, 'checkout');
    await page.getByRole('button', { name: 'Pay' }).click();
    await eventually(() => page.locator('#status').textContent()).toBe('Payment succeeded.');
    await page.waitForURL((target) => target.pathname === '/return', { timeout: 10_000 });
    const back = new URL(page.url());
    expect(Object.fromEntries(back.searchParams)).toEqual({ payment_id: payment.id, status: 'succeeded' });
    expect(await page.locator('#result').textContent()).toBe('Thank you for your order.');
    expect((await paymentNow(payment.id)).status).toBe('SUCCEEDED');
    expect(consoleErrors).toEqual([]);
  });

  it('goes through the sandbox’s 3D Secure challenge page and back to return_url', async () => {
    const { payment, url } = await checkoutFor({ authenticationType: 'THREE_DS' });
    const { page } = await openPage(browser, 'desktop');
    await page.goto(url);
    await fillCard(page, '4000002500003155');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((target) => target.origin === new URL(stack.sandboxUrl).origin, { timeout: 10_000 });
    await screenshot(page, 'checkout-3ds-challenge');
    await page.getByRole('button', { name: 'Complete authentication' }).click();
    await page.waitForURL((target) => target.pathname === '/return', { timeout: 10_000 });
    expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ payment_id: payment.id, status: 'succeeded' });
    const paid = await paymentNow(payment.id);
    expect(paid.status).toBe('SUCCEEDED');
    expect(paid.history.map((change) => change.toStatus)).toContain('REQUIRES_CUSTOMER_ACTION');
  });

  it('shows a decline on the phone’s screen, by the Pay button (which says the amount), and lets the customer pay with another card', async () => {
    const { payment, url } = await checkoutFor();
    const { page } = await openPage(browser, 'phone');
    await page.goto(url);
    await eventually(() => page.locator('#pay').textContent()).toBe('Pay 25.99 EUR');
    await fillCard(page, '4000000000000002');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Pay' }).click();
    const alert = page.getByRole('alert');
    await eventually(() => alert.textContent()).toMatch(/^The payment was declined: Your card was declined\.$/);
    // Where the customer looks: the message and the button are on screen, not below the fold.
    expect([await onScreen(page, '#alert'), await onScreen(page, '#pay')]).toEqual([true, true]);
    // The card number is cleared and focused, ready for another card.
    expect(await page.getByLabel('Card number').inputValue()).toBe('');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('card-number');
    await screenshot(page, 'checkout-declined');
    expect((await paymentNow(payment.id)).status).not.toBe('SUCCEEDED');
    await fillCard(page, '5555555555554444');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((target) => target.pathname === '/return', { timeout: 10_000 });
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded');
    const paid = await paymentNow(payment.id);
    expect(paid.status).toBe('SUCCEEDED');
    expect(paid.attempts).toHaveLength(2);
  });

  it('checks the card in the browser first: a wrong check digit, a past expiry or a short CVC is named and never sent', async () => {
    const { payment, url } = await checkoutFor();
    const { page } = await openPage(browser, 'desktop');
    await page.goto(url);
    const cases = [
      { number: '4242424242424241', cvc: '123', message: /^Card number: .*check digit/, field: 'card-number' },
      { number: '4242424242424242', cvc: '12', message: /^CVC: must be 3 digits/, field: 'card-cvc' },
    ];
    for (const { number, cvc, message, field } of cases) {
      await fillCard(page, number, cvc);
      await page.getByRole('button', { name: 'Pay' }).click();
      await eventually(() => page.getByRole('alert').textContent()).toMatch(message);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe(field);
      expect(await page.locator(`#${field}`).getAttribute('aria-invalid')).toBe('true');
    }
    await fillCard(page, '4242424242424242');
    await page.getByLabel('Expiry year (YYYY)').fill('2001');
    await page.getByRole('button', { name: 'Pay' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/expired/);
    // Nothing reached the API: the payment still awaits its method.
    const untouched = await paymentNow(payment.id);
    expect([untouched.status, untouched.activeAttempt.status, untouched.attempts.length]).toEqual(['REQUIRES_PAYMENT_METHOD', 'PAYMENT_METHOD_AWAITED', 1]);
  });

  it('on a phone, flags every field at fault at once and says why where the customer looks', async () => {
    const { payment, url } = await checkoutFor();
    const { page } = await openPage(browser, 'phone');
    await page.goto(url);
    await page.getByLabel('Card number').fill('4242424242424241');
    await page.getByLabel('Expiry month (MM)').fill('13');
    await page.getByLabel('Expiry year (YYYY)').fill(String(new Date().getUTCFullYear() + 3));
    await page.getByLabel('CVC', { exact: true }).fill('1');
    await page.getByRole('button', { name: 'Pay' }).click();
    const alert = page.getByRole('alert');
    await eventually(() => alert.textContent()).toMatch(/^Card number: .*check digit.*\. Expiry month \(MM\): month must be .*\. CVC: must be 3 digits\.$/);
    const invalid = await page.locator('[aria-invalid=true]').evaluateAll((inputs) => inputs.map((input) => input.id));
    expect(invalid).toEqual(['card-number', 'card-expiry-month', 'card-cvc']);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('card-number');
    expect(await onScreen(page, '#alert')).toBe(true);
    await screenshot(page, 'checkout-invalid');
    expect((await paymentNow(payment.id)).attempts).toHaveLength(1);
  });

  it('after a decline and a reload, still takes another card', async () => {
    const { payment, url } = await checkoutFor();
    const { page } = await openPage(browser, 'phone');
    await page.goto(url);
    await fillCard(page, '4000000000000002');
    await page.getByRole('button', { name: 'Pay' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/declined/);
    await page.reload();
    await eventually(() => page.getByRole('alert').textContent()).toBe(
      'The last attempt failed: Your card was declined. You can pay with another card or method.',
    );
    expect(page.url()).toBe(`${stack.api.url}/checkout`);
    await fillCard(page, '4242424242424242');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((target) => target.pathname === '/return', { timeout: 10_000 });
    expect(new URL(page.url()).searchParams.get('status')).toBe('succeeded');
    const paid = await paymentNow(payment.id);
    expect([paid.status, paid.attempts.length]).toEqual(['SUCCEEDED', 2]);
  });

  it('is keyboard-operable: the methods are a labelled radio group and Enter in a field pays', async () => {
    const { payment, url } = await checkoutFor();
    const { page } = await openPage(browser, 'phone');
    await page.goto(url);
    await eventually(() => page.getByRole('group', { name: 'How would you like to pay?' }).isVisible()).toBe(true);
    expect(await page.getByRole('radio', { name: 'Card' }).isChecked()).toBe(true);
    await page.getByLabel('Card number').focus();
    await page.keyboard.type('4242424242424242');
    await page.keyboard.press('Tab');
    await page.keyboard.type('12');
    await page.keyboard.press('Tab');
    await page.keyboard.type(String(new Date().getUTCFullYear() + 2));
    await page.keyboard.press('Tab');
    await page.keyboard.type('123');
    await page.keyboard.press('Enter');
    await page.waitForURL((target) => target.pathname === '/return', { timeout: 10_000 });
    expect((await paymentNow(payment.id)).status).toBe('SUCCEEDED');
  });

  it('is what a payment link opens, and the customer comes back to the link’s page', async () => {
    const link = dataOf(
      await shop.secret(CreatePaymentLinkDocument, { input: { amount: 1500, currency: 'USD', description: 'Concert ticket' } }),
    ).createPaymentLink;
    const { page } = await openPage(browser, 'phone');
    await page.goto(link.url);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((target) => target.pathname === '/checkout');
    await eventually(() => page.locator('#amount').textContent()).toBe('15.00 USD');
    await fillCard(page, '4242424242424242');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((target) => target.pathname === `/payment-links/${link.id}` && target.searchParams.get('status') === 'succeeded', {
      timeout: 10_000,
    });
    await eventually(() => page.locator('#returned').textContent()).toMatch(/^Payment pay_\w+ is succeeded\.$/);
  });

  it('back on the link’s page, shows the payment’s status as the service has it, and only to the tab that started it', async () => {
    const link = dataOf(
      await shop.secret(CreatePaymentLinkDocument, { input: { amount: 700, currency: 'EUR', description: 'Raffle ticket' } }),
    ).createPaymentLink;
    const { page } = await openPage(browser, 'phone');
    await page.goto(link.url);
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL((target) => target.pathname === '/checkout');
    await fillCard(page, '4000000000000002');
    await page.getByRole('button', { name: 'Pay' }).click();
    await eventually(() => page.getByRole('alert').textContent()).toMatch(/declined/);
    const [declined] = dataOf(await shop.secret(PaymentLinkDocument, { id: link.id })).paymentLink!.payments;
    // The URL says succeeded; the page says what the service says.
    await page.goto(`${link.url}?payment_id=${declined!.id}&status=succeeded`);
    await eventually(() => page.locator('#returned').textContent()).toBe(`Payment ${declined!.id} is failed.`);
    // A made-up id, or a real payment this tab did not start, shows an error and nothing of any payment.
    const stranger = (await openPage(browser, 'phone')).page;
    for (const [viewer, id] of [
      [page, 'pay_000000000000000000000000'],
      [stranger, declined!.id],
    ] as const) {
      await viewer.goto(`${link.url}?payment_id=${id}&status=succeeded`);
      await eventually(() => viewer.locator('#returned').textContent()).toMatch(/^This page can only show a payment started from it/);
    }
  });

  it('says what is wrong when opened without its credentials', async () => {
    const { page } = await openPage(browser, 'phone');
    await page.goto(`${stack.api.url}/checkout`);
    await eventually(() => page.locator('#status').textContent()).toMatch(/incomplete/);
    expect(await page.locator('#pay-form').isHidden()).toBe(true);
  });
});
