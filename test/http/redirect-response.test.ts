// The public route a processor returns the customer to after 3D Secure: only the return URL the processor was
// given (with its attempt's token) syncs the payment and sends the browser on; anyone else who knows a payment
// id learns nothing about it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  shop = await merchantWithSandbox(stack);
});
afterAll(() => stack?.close());

const card = { card: { number: '4000002500003155', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

/** A 3DS payment whose customer completed the challenge; the processor is about to send the browser back. */
async function completedChallenge(returnUrl: string | null) {
  const created = dataOf(
    await shop.secret(CreatePaymentDocument, { input: { amount: 1200, currency: 'EUR', ...(returnUrl ? { returnUrl } : {}) } }),
  ).createPayment;
  const pending = dataOf(
    await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }),
  ).confirmPayment;
  await fetch(pending.nextAction!.redirectToUrl);
  const submitted = await fetch(`${pending.nextAction!.redirectToUrl}/complete`, { method: 'POST', redirect: 'manual' });
  return { id: created.id, back: new URL(submitted.headers.get('location')!) };
}

const statusOf = async (id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment.status;

describe('the redirect-response route', () => {
  it('without its attempt’s token: the same 404 page as an unknown payment, no sync, no return URL, no status', async () => {
    const { id, back } = await completedChallenge('https://shop.example/done');
    const other = await completedChallenge('https://shop.example/done');
    const route = `${back.origin}${back.pathname}`;
    const unknown = await fetch(`${back.origin}/payments/pay_000000000000000000000000/redirect/response/sandbox?token=x`, { redirect: 'manual' });
    const unknownPage = await unknown.text();
    expect(unknown.status).toBe(404);
    const forged = [
      route,
      `${route}?token=`,
      `${route}?token=${back.searchParams.get('token')!.slice(1)}`,
      `${route}?token=${other.back.searchParams.get('token')}`,
    ];
    for (const url of forged) {
      const refused = await fetch(url, { redirect: 'manual' });
      expect(refused.status).toBe(404);
      expect(refused.headers.get('location')).toBeNull();
      const html = await refused.text();
      expect(html).toBe(unknownPage);
      expect(html).not.toMatch(/succeeded|requires|shop\.example/i);
    }
    // Nothing asked the processor: the challenge completed there, but the payment still waits for the customer.
    expect(await statusOf(id)).toBe('REQUIRES_CUSTOMER_ACTION');
    const returned = await fetch(back, { redirect: 'manual' });
    expect(returned.status).toBe(302);
    expect(Object.fromEntries(new URL(returned.headers.get('location')!).searchParams)).toEqual({ payment_id: id, status: 'succeeded' });
    expect(await statusOf(id)).toBe('SUCCEEDED');
  });

  it('with the token and no return_url: a page under the pages’ policy shows the status', async () => {
    const { id, back } = await completedChallenge(null);
    const refused = await fetch(`${back.origin}${back.pathname}`);
    expect(refused.status).toBe(404);
    expect(await refused.text()).not.toContain(id);
    const shown = await fetch(back);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(shown.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await shown.text()).toContain(`Payment ${id} is succeeded.`);
  });
});
