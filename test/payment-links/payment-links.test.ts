// Payment links over HTTP: created by the merchant, opened and used by anyone holding the URL; each use
// creates its own payment (confirmed with its client secret like any SDK payment); bounds and expiry hold.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ConfirmPaymentDocument,
  CreateApiKeyDocument,
  CreatePaymentLinkDocument,
  MerchantDocument,
  PaymentLinkDocument,
  RevokeApiKeyDocument,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  shop = await merchantWithSandbox(stack);
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

const use = (id: string, body: unknown = {}) =>
  fetch(`${stack.api.url}/payment-links/${id}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

describe('payment links', () => {
  it('are reusable: each use creates its own payment, confirmed with its client secret', async () => {
    const link = dataOf(
      await shop.secret(CreatePaymentLinkDocument, { input: { amount: 2500, currency: 'EUR', description: 'Concert ticket' } }),
    ).createPaymentLink;
    expect(link.url).toMatch(new RegExp(`^https?://[^/]+/payment-links/${link.id}$`));
    expect(link.id).toMatch(/^plink_/);
    const page = await fetch(`${stack.api.url}/payment-links/${link.id}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Concert ticket');
    expect(await (await fetch(`${stack.api.url}/payment-links/${link.id}`, { headers: { accept: 'application/json' } })).json()).toMatchObject({
      id: link.id,
      amount: 2500,
      currency: 'EUR',
    });
    const first = await (await use(link.id)).json();
    const second = await (await use(link.id)).json();
    expect(first).toMatchObject({ amount: 2500, currency: 'EUR', payment_id: expect.stringMatching(/^pay_/) });
    expect(second.payment_id).not.toBe(first.payment_id);
    const paid = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: first.client_secret, paymentMethodData: card } }),
    ).confirmPayment;
    expect(paid.status).toBe('SUCCEEDED');
    const payments = dataOf(await shop.secret(PaymentLinkDocument, { id: link.id })).paymentLink!.payments;
    expect(payments.map((payment) => payment.id).sort()).toEqual([first.payment_id, second.payment_id].sort());
    expect(payments.every((payment) => payment.paymentLinkId === link.id)).toBe(true);
  });

  it('open the hosted checkout with the use’s client secret and the merchant’s publishable key', async () => {
    const link = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { amount: 1500, currency: 'EUR', description: 'Workshop' } })).createPaymentLink;
    const page = await (await fetch(`${stack.api.url}/payment-links/${link.id}`)).text();
    expect(page).toContain('<form id="pay">');
    expect(page).toContain('<script type="module" src="/assets/payment-link.js"></script>');
    expect(page).not.toContain('card'); // the checkout takes the card, not the link's page
    const created = await (await use(link.id)).json();
    expect(created).toMatchObject({ publishable_key: shop.publishableKey, client_secret: expect.stringMatching(new RegExp(`^${created.payment_id}_secret_`)) });
    // The link's own card route is gone: the checkout confirms through the API like any SDK.
    expect((await fetch(`${stack.api.url}/payment-links/${link.id}/confirm`, { method: 'POST', body: '{}' })).status).toBe(404);
    // Back from the checkout (or 3D Secure), the page's script reads the status: the server never echoes the URL's.
    const back = await (await fetch(`${stack.api.url}/payment-links/${link.id}?payment_id=${created.payment_id}&status=succeeded`)).text();
    expect(back).not.toMatch(new RegExp(`succeeded|${created.payment_id}`));
  });

  it('are pages served like the checkout: a policy refusing inline script and framing, nosniff, never cached, no Referer', async () => {
    const link = dataOf(
      await shop.secret(CreatePaymentLinkDocument, { input: { minAmount: 100, maxAmount: 900, currency: 'EUR', description: 'Donation' } }),
    ).createPaymentLink;
    const page = await fetch(`${stack.api.url}/payment-links/${link.id}`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy')!;
    for (const directive of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"]) expect(policy).toContain(directive);
    expect(policy).not.toContain('unsafe-inline');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|\son\w+=/); // no inline script or handler
    const script = await fetch(`${stack.api.url}/assets/payment-link.js`);
    expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
  });

  it('refuse a use, writing nothing, while the merchant has no usable publishable key', async () => {
    const merchant = await merchantWithSandbox(stack);
    const link = dataOf(await merchant.secret(CreatePaymentLinkDocument, { input: { amount: 900, currency: 'USD' } })).createPaymentLink;
    const { merchant: account } = dataOf(await merchant.secret(MerchantDocument, {}));
    const publishable = account.apiKeys.find((key) => key.type === 'PUBLISHABLE')!;
    dataOf(await merchant.secret(RevokeApiKeyDocument, { input: { keyId: publishable.id } }));
    const refused = await use(link.id);
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toMatchObject({ code: 'INVALID_STATE', message: expect.stringContaining('publishable key') });
    expect(dataOf(await merchant.secret(PaymentLinkDocument, { id: link.id })).paymentLink!.payments).toEqual([]);
    const { key } = dataOf(await merchant.secret(CreateApiKeyDocument, { input: { name: 'checkout', type: 'PUBLISHABLE' } })).createApiKey;
    expect((await (await use(link.id)).json()).publishable_key).toBe(key);
  });

  it('let the customer choose an amount within the bounds, and refuse others naming the field', async () => {
    const link = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { minAmount: 500, maxAmount: 5000, currency: 'USD' } })).createPaymentLink;
    expect((await (await use(link.id, { amount: 1234 })).json()).amount).toBe(1234);
    for (const amount of [499, 5001, undefined]) {
      const refused = await use(link.id, amount === undefined ? {} : { amount });
      expect(refused.status).toBe(400);
      expect((await refused.json()).error).toMatchObject({ code: 'INVALID_INPUT', field: 'amount' });
    }
    expect((await use(link.id, { amount: 1000, extra: true })).status).toBe(400);
  });

  it('expire, and unknown ones are 404', async () => {
    const link = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { amount: 100, currency: 'USD', expiresInSeconds: 60 } })).createPaymentLink;
    await sql.query(`UPDATE payment_links SET expires_at = now() - interval '1 second' WHERE id = $1`, [link.id]);
    expect((await use(link.id)).status).toBe(410);
    expect((await fetch(`${stack.api.url}/payment-links/${link.id}`)).status).toBe(410);
    expect((await use('plink_DoesNotExist000000000000')).status).toBe(404);
    expect((await use('../../graphql')).status).toBe(404);
  });

  it.each([
    [{ currency: 'USD' }, 'amount'],
    [{ currency: 'USD', amount: 100, minAmount: 50, maxAmount: 200 }, 'amount'],
    [{ currency: 'USD', minAmount: 500 }, 'maxAmount'],
    [{ currency: 'USD', minAmount: 500, maxAmount: 100 }, 'maxAmount'],
    [{ currency: 'XXQ', amount: 100 }, 'currency'],
    // String#toUpperCase would make it USD: codes are upper-cased letter by ASCII letter only.
    [{ currency: 'uſd', amount: 100 }, 'currency'],
    [{ currency: 'USD', amount: 100, expiresInSeconds: 59 }, 'expiresInSeconds'],
  ])('refuse %j naming %s', async (input, field) => {
    expect(errorOf(await shop.secret(CreatePaymentLinkDocument, { input }), 'INVALID_INPUT').extensions).toMatchObject({ field });
  });
});
