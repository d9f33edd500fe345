// The hosted checkout's live updates in a real Chromium: when the API refuses the stream (here: the payment's
// client secret already holds as many subscriptions as one process takes), the customer is told, instead of
// a page that silently never updates.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePaymentDocument, PaymentUpdatedDocument } from '../gql/graphql.ts';
import { eventually, launchBrowser, openPage } from '../support/browser.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { liveChannel, subscribeWs, untilLive, wsClient } from '../support/subscriptions.ts';

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  // Bank debits stay PROCESSING for a minute: the checkout follows them live.
  [stack, browser] = await Promise.all([startStack({ sandboxBankDebitSettleMs: 60_000, env: { SUBSCRIPTIONS_PER_CLIENT_SECRET: '1' } }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('the checkout’s live updates', () => {
  it('show an alert when the stream is refused', async () => {
    const shop = await merchantWithSandbox(stack);
    const debit = { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } };
    const payment = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 1800, currency: 'EUR', confirm: true, paymentMethodData: debit } }),
    ).createPayment;
    expect(payment.status).toBe('PROCESSING');
    // Another tab of the same payment already holds the one subscription its client secret may have.
    const client = wsClient(stack.api.url, shop.publishableKey);
    const variables = { paymentId: payment.id, clientSecret: payment.clientSecret };
    const other = subscribeWs(client, PaymentUpdatedDocument, variables);
    // Once it is live it holds the slot (subscribed together, either of the two could have taken it), so a second is refused.
    await untilLive(stack.env, liveChannel.payment(payment.id));
    const probe = subscribeWs(client, PaymentUpdatedDocument, variables);
    expect((await probe.waitForError()).map((error) => error.extensions?.code)).toEqual(['RATE_LIMITED']);
    expect(other.errors).toEqual([]);
    const { page, consoleErrors } = await openPage(browser, 'phone');
    await page.goto(`${stack.api.url}/checkout#${new URLSearchParams({ client_secret: payment.clientSecret, publishable_key: shop.publishableKey })}`);
    await eventually(() => page.locator('#status').textContent()).toBe('Your payment is processing. This page updates when it is decided.');
    await eventually(() => page.getByRole('alert').textContent()).toMatch(
      /^Live updates stopped: At most 1 subscriptions per client secret on one server\. Reload this page/,
    );
    expect(other.errors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await client.dispose();
  });
});
