// Money-movement races around retries across processors (the issue-4 review): an answer about one
// attempt never lands on another, a failure heard by someone else while its call waits is left to that call
// (which retries it), a hard-declined card is not sent back by a manual retry, and the API never echoes a
// card number it refused.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { sandboxSignature } from '../support/sandbox-signature.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { eventsOf } from '../support/webhooks.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

// A slow processor: a sync can land while a retry on the next connector is in flight.
let stack: Stack;
// One slow enough that the test's own requests fit in its delay even on a busy machine: what the test sends as
// the processor lands while the processor call is on its way.
let slow: Stack;
beforeAll(async () => {
  [stack, slow] = await Promise.all([startStack({ sandboxLatencyMs: 400 }), startStack({ sandboxLatencyMs: 5_000 })]);
});
afterAll(() => Promise.all([stack.close(), slow.close()]));

type Shop = Awaited<ReturnType<typeof merchantWithSandbox>>;

/** The sandbox's own view of the payment it made for `attemptId`, once it has made it (it does so at once, and answers later). */
function processorPaymentOf(shop: Shop, attemptId: string): Promise<Record<string, unknown>> {
  return vi.waitFor(
    async () => {
      const response = await fetch(`${slow.sandboxUrl}/v1/payments?reference=${attemptId}`, {
        headers: { authorization: `Bearer ${shop.sandboxKey}`, 'x-sandbox-latency-ms': '0' },
      });
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    },
    { timeout: 5_000, interval: 20 },
  );
}

/** Sends the sandbox's callback about `atProcessor` (of `type`) to the service, signed with the account's `secret`. */
function sendCallback(shop: Shop, secret: string, type: string, atProcessor: Record<string, unknown>): Promise<Response> {
  const body = JSON.stringify({ id: `evt_sbx_race_${String(atProcessor.id)}`, type, created: Math.floor(Date.now() / 1000), data: { object: atProcessor } });
  return fetch(`${slow.api.url}/webhooks/${shop.merchantId}/${shop.connectorAccountId}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'sandbox-signature': sandboxSignature(body, secret) },
  });
}

describe('an answer about one attempt', () => {
  it('never lands on the next one: a sync during an automatic retry leaves the retry’s success standing', async () => {
    const shop = await merchantWithSandbox(stack);
    await addConnectorAccount(stack, shop, 'fauxpay');
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, routing: ['sandbox', 'fauxpay'] } }));
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2000, currency: 'USD' } })).createPayment;
    // 4000000000000119: a retryable processing error at sandbox, approved at fauxpay.
    const confirming = shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000119') } });
    // While sandbox's slow answer is coming and fauxpay is being tried, the customer's browser comes back. Whether
    // a sync hears sandbox's failure before confirm does or after, the retry is confirm's (the next test pins the first case).
    const syncs: Promise<Response>[] = [];
    for (const delay of [150, 450, 650, 850]) {
      await new Promise((resolve) => setTimeout(resolve, delay - (syncs.length ? [150, 450, 650, 850][syncs.length - 1]! : 0)));
      syncs.push(fetch(stack.api.services.payments.redirectReturnUrl(created.id, created.activeAttempt.id, 'sandbox'), { redirect: 'manual' }));
    }
    const confirmed = dataOf(await confirming).confirmPayment;
    await Promise.all(syncs);
    const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
    expect(confirmed.status).toBe('SUCCEEDED');
    expect(read).toMatchObject({ status: 'SUCCEEDED', amountReceived: 2000, connector: 'fauxpay' });
    expect(read.attempts.map((attempt) => `${attempt.connector}:${attempt.status}`)).toEqual(['sandbox:FAILURE', 'fauxpay:CHARGED']);
  });

  it('is left to the call when it is a retryable failure heard first by a callback: the callback comes again, the call retries, the payment is never FAILED', async () => {
    const secret = 'whsec_races_0123456789abcdef';
    const shop = await merchantWithSandbox(slow, 'sandbox', { webhookSecret: secret });
    await addConnectorAccount(slow, shop, 'fauxpay');
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, routing: ['sandbox', 'fauxpay'] } }));
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2000, currency: 'USD' } })).createPayment;
    const confirming = shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000119') } });
    // The sandbox fails the attempt at once and answers 5 s later: in between, its callback about the failure arrives.
    const atProcessor = await processorPaymentOf(shop, created.activeAttempt.id);
    expect(atProcessor.status).toBe('failed');
    const early = await sendCallback(shop, secret, 'payment.failed', atProcessor);
    expect(early.status).toBe(503);

    const confirmed = dataOf(await confirming).confirmPayment;
    expect(confirmed).toMatchObject({ status: 'SUCCEEDED', amountReceived: 2000, connector: 'fauxpay' });
    const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
    expect(read.attempts.map((attempt) => `${attempt.connector}:${attempt.status}`)).toEqual(['sandbox:FAILURE', 'fauxpay:CHARGED']);
    expect(read.history.filter((row) => row.subject === 'intent').map((row) => row.toStatus)).not.toContain('FAILED');
    expect((await eventsOf(shop, created.id)).map((event) => event.eventType)).toEqual(['PAYMENT_SUCCEEDED']);
    // Sent again, it is about an attempt the retry has closed: it changes nothing.
    expect(await (await sendCallback(shop, secret, 'payment.failed', atProcessor)).json()).toEqual({ received: true, outcome: 'duplicate_or_stale' });
  });
});

describe('an answer someone else applied while the processor call was on its way', () => {
  it('stands: confirm’s own commit conflicts, reads the payment again and returns it as the callback left it, one move and one event', async () => {
    const stack = slow;
    const secret = 'whsec_races_0123456789abcdef';
    const shop = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 3100, currency: 'USD' } })).createPayment;
    const confirming = shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } });
    // The sandbox charges at once and answers 5 s later: in between, its callback about the charge arrives.
    const attemptId = await vi.waitFor(
      async () => {
        const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
        expect(read.status).toBe('PROCESSING');
        return read.activeAttempt.id;
      },
      { timeout: 5_000, interval: 20 },
    );
    const atProcessor = await processorPaymentOf(shop, attemptId);
    expect(atProcessor.status).toBe('succeeded');
    const callback = await sendCallback(shop, secret, 'payment.succeeded', atProcessor);
    expect(await callback.json()).toEqual({ received: true, outcome: 'applied' });

    const confirmed = dataOf(await confirming).confirmPayment;
    expect(confirmed).toMatchObject({ status: 'SUCCEEDED', amountReceived: 3100 });
    const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
    expect(read.version).toBe(confirmed.version);
    // The charge was recorded once, by the callback; the processor's own answer then changed nothing.
    const charged = read.history.filter((row) => row.subject === 'attempt' && row.toStatus === 'CHARGED');
    expect(charged).toEqual([expect.objectContaining({ fromStatus: 'PENDING', actor: 'callback' })]);
    expect((await eventsOf(shop, created.id)).map((event) => event.eventType)).toEqual(['PAYMENT_SUCCEEDED']);
  });
});

describe('a manual retry', () => {
  it('refuses the card that was hard-declined for this payment, and accepts another method', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1200, currency: 'USD' } })).createPayment;
    errorOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000009995') } }),
      'PAYMENT_DECLINED',
    );
    const again = errorOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000009995') } }),
      'INVALID_INPUT',
    );
    expect(again.extensions?.field).toBe('paymentMethodData');
    expect(again.message).toMatch(/insufficient_funds/);
    const other = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } }),
    ).confirmPayment;
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
