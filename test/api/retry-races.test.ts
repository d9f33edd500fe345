// Money-movement races around retries across processors (the issue-4 review): an answer about one
// attempt never lands on another, a hard-declined card is not sent back by a manual retry, and the
// API never echoes a card number it refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

let stack: Stack;
beforeAll(async () => {
  // A slow processor: a sync can land while a retry on the next connector is in flight.
  stack = await startStack({ sandboxLatencyMs: 400 });
});
afterAll(() => stack.close());

describe('an answer about one attempt', () => {
  it('never lands on the next one: a sync during an automatic retry leaves the retry’s success standing', async () => {
    const shop = await merchantWithSandbox(stack);
    await addConnectorAccount(stack, shop, 'fauxpay');
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, routing: ['sandbox', 'fauxpay'] } }));
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2000, currency: 'USD' } })).createPayment;
    // 4000000000000119: a retryable processing error at sandbox, approved at fauxpay.
    const confirming = shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000119') } });
    // While sandbox's slow answer is coming and fauxpay is being tried, the customer's browser comes back.
    const syncs: Promise<Response>[] = [];
    for (const delay of [150, 450, 650, 850]) {
      await new Promise((resolve) => setTimeout(resolve, delay - (syncs.length ? [150, 450, 650, 850][syncs.length - 1]! : 0)));
      syncs.push(fetch(`${stack.api.url}/payments/${created.id}/redirect/response/sandbox`, { redirect: 'manual' }));
    }
    const confirmed = dataOf(await confirming).confirmPayment;
    await Promise.all(syncs);
    const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
    expect(confirmed.status).toBe('SUCCEEDED');
    expect(read).toMatchObject({ status: 'SUCCEEDED', amountReceived: 2000, connector: 'fauxpay' });
    expect(read.attempts.map((attempt) => `${attempt.connector}:${attempt.status}`)).toEqual(['sandbox:FAILURE', 'fauxpay:CHARGED']);
  });
});

describe('a manual retry', () => {
  it('refuses the card that was hard-declined for this payment, and accepts another method', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1200, currency: 'USD' } })).createPayment;
    errorOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000009995') } }), 'PAYMENT_DECLINED');
    const again = errorOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000009995') } }), 'INVALID_INPUT');
    expect(again.extensions?.field).toBe('paymentMethodData');
    expect(again.message).toMatch(/insufficient_funds/);
    const other = dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } })).confirmPayment;
    expect(other.status).toBe('SUCCEEDED');
    const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
    expect(read.attempts).toHaveLength(2); // the refused retry never reached the processor
  });
});

describe('refused input', () => {
  it('names the field without echoing a card number or CVC sent with the wrong type', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1200, currency: 'USD' } })).createPayment;
    const query = `mutation($input: ConfirmPaymentInput!) { confirmPayment(input: $input) { id } }`;
    for (const cardInput of [
      { number: 4242424242424242, expiryMonth: 12, expiryYear: 2031, cvc: '123' },
      { number: '4242424242424242', expiryMonth: 12, expiryYear: 2031, cvc: 737 },
    ]) {
      const response = await fetch(`${stack.api.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': shop.publishableKey },
        body: JSON.stringify({ query, variables: { input: { clientSecret: created.clientSecret, paymentMethodData: { card: cardInput } } } }),
      });
      const text = await response.text();
      expect(text).toContain('INVALID_INPUT');
      expect(text).toContain('paymentMethodData.card');
      expect(text).not.toContain('4242424242424242');
      expect(text).not.toContain('737');
    }
  });
});
