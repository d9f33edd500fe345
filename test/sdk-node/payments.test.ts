// The server SDK (@payments-orchestrator/node) as a merchant backend imports it, against the real API, worker
// and sandbox processor: payments through their life, refunds, typed errors, pagination and live updates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardDeclinedError, InvalidInputError, NotFoundError, Payments, type Payment } from '@payments-orchestrator/node';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let payments: Payments;
beforeAll(async () => {
  stack = await startStack();
  shop = await merchantWithSandbox(stack);
  payments = new Payments({ apiKey: shop.secretKey, baseUrl: stack.api.url });
});
afterAll(async () => {
  await payments?.close();
  await stack?.close();
});

describe('the server SDK', () => {
  it('creates, confirms with a test card, captures and refunds a payment', async () => {
    const created = await payments.payments.create({ amount: 4200, currency: 'EUR', captureMethod: 'MANUAL', metadata: { order: 'A-1' } });
    expect(created).toMatchObject({ status: 'REQUIRES_PAYMENT_METHOD', amount: 4200, currency: 'EUR', metadata: { order: 'A-1' } });
    // By id: the SDK reads the payment's client secret for the confirm.
    const authorized = await payments.payments.confirm(created.id, { paymentMethodData: card() });
    expect(authorized).toMatchObject({ id: created.id, status: 'REQUIRES_CAPTURE', amountCapturable: 4200 });
    expect(authorized.activeAttempt.card).toMatchObject({ last4: '4242' });
    const captured = await payments.payments.capture(created.id, { amountToCapture: 3000 });
    expect(captured).toMatchObject({ status: expect.stringMatching(/SUCCEEDED|PARTIALLY_CAPTURED/), amountReceived: 3000 });
    const refund = await payments.refunds.create({ paymentId: created.id, amount: 1000, reason: 'damaged' });
    expect(refund).toMatchObject({ paymentId: created.id, amount: 1000, reason: 'damaged', status: expect.stringMatching(/PENDING|SUCCEEDED/) });
    expect(await payments.refunds.retrieve(refund.id)).toMatchObject({ id: refund.id, amount: 1000 });
    const refunds: string[] = [];
    for await (const each of payments.refunds.list({ paymentId: created.id })) refunds.push(each.id);
    expect(refunds).toEqual([refund.id]);
    expect((await payments.payments.retrieve(created.id)).amountRefunded).toBe(1000);
  });

  it('confirms a payment given as an object, and a 3D Secure card answers with a redirect', async () => {
    const created = await payments.payments.create({ amount: 1999, currency: 'EUR', authenticationType: 'THREE_DS', returnUrl: 'https://shop.example/return' });
    const challenged = await payments.payments.confirm(created, { paymentMethodData: card('4000002500003155') });
    expect(challenged.status).toBe('REQUIRES_CUSTOMER_ACTION');
    expect(challenged.nextAction).toMatchObject({ type: 'REDIRECT_TO_URL', redirectToUrl: expect.stringContaining(stack.sandboxUrl) });
    expect((await payments.payments.sync(created.id)).status).toBe('REQUIRES_CUSTOMER_ACTION');
    expect((await payments.payments.cancel(created.id, { cancellationReason: 'abandoned' })).status).toBe('CANCELLED');
  });

  it('raises a decline as CardDeclinedError with the catalog’s code, and refused input as InvalidInputError naming the field', async () => {
    const created = await payments.payments.create({ amount: 1250, currency: 'USD' });
    const declined = await payments.payments.confirm(created, { paymentMethodData: card('4000000000000002') }).catch((error: unknown) => error);
    expect(declined).toBeInstanceOf(CardDeclinedError);
    expect(declined).toMatchObject({ code: 'PAYMENT_DECLINED', declineCode: 'card_declined', httpStatus: 402, requestId: expect.any(String) });
    const refused = await payments.payments.create({ amount: -5, currency: 'USD' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect(refused).toMatchObject({ code: 'INVALID_INPUT', field: 'amount', httpStatus: 400 });
    await expect(payments.payments.retrieve('pay_missing')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('iterates every payment across pages', async () => {
    const customerId = `cus_pages_${Date.now()}`;
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) ids.push((await payments.payments.create({ amount: 100 + index, currency: 'EUR', customerId })).id);
    const listed: string[] = [];
    for await (const payment of payments.payments.list({ customerId, first: 2 })) listed.push(payment.id);
    expect(listed).toEqual([...ids].reverse());
  });

  it('passes the search and filters of list() through (docs/api.md, "Finding payments")', async () => {
    const email = `Grace.${Date.now()}@Example.com`;
    const eur = (await payments.payments.create({ amount: 990, currency: 'EUR', email })).id;
    await payments.payments.create({ amount: 990, currency: 'USD', email });
    const listed: Payment[] = [];
    for await (const payment of payments.payments.list({ search: email.toUpperCase(), currency: 'EUR', first: 1 })) listed.push(payment);
    expect(listed.map((payment) => [payment.id, payment.email])).toEqual([[eur, email]]);
  });

  it('yields each committed change of a payment from updates(), until the loop breaks', async () => {
    const created = await payments.payments.create({ amount: 700, currency: 'EUR' });
    const seen: Payment[] = [];
    const watching = (async () => {
      for await (const update of payments.payments.updates(created.id)) {
        seen.push(update);
        if (update.status === 'SUCCEEDED') break;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the subscription starts on its socket
    await payments.payments.confirm(created, { paymentMethodData: card() });
    await watching;
    expect(seen.at(-1)).toMatchObject({ id: created.id, status: 'SUCCEEDED' });
    expect(seen.map((update) => update.version)).toEqual([...seen.map((update) => update.version)].sort((a, b) => a - b));
  });
});
