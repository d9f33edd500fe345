// The payments SDK from Node (as a merchant's own TypeScript would import it), against the real API and
// sandbox: the SDK operations with a publishable key and one payment's client secret, and nothing more.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, checkCard, createPaymentsClient, paymentIdOf, type SdkPayment } from '@payments-orchestrator/js';
import { CreatePaymentDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
beforeAll(async () => {
  stack = await startStack();
  shop = await merchantWithSandbox(stack);
});
afterAll(() => stack?.close());

async function sdkFor(input: { authenticationType?: 'THREE_DS' } = {}) {
  const payment = dataOf(
    await shop.secret(CreatePaymentDocument, { input: { amount: 1999, currency: 'EUR', returnUrl: 'https://shop.example/return', ...input } }),
  ).createPayment;
  const sdk = createPaymentsClient({
    publishableKey: shop.publishableKey,
    clientSecret: payment.clientSecret,
    baseUrl: stack.api.url,
    webSocketImpl: WebSocket,
  });
  return { payment, sdk };
}

describe('the payments SDK', () => {
  it('reads the payment and its methods, confirms, and streams each change', async () => {
    const { payment, sdk } = await sdkFor();
    expect(sdk.paymentId).toBe(payment.id);
    expect(await sdk.payment()).toMatchObject({ id: payment.id, status: 'REQUIRES_PAYMENT_METHOD', amount: 1999, currency: 'EUR' });
    const methods = await sdk.paymentMethods();
    expect(methods.methods.map((method) => method.type)).toContain('CARD');
    const seen: SdkPayment[] = [];
    sdk.onUpdate((update) => seen.push(update));
    await new Promise((resolve) => setTimeout(resolve, 300)); // the subscription starts on its socket
    const paid = await sdk.confirm({ paymentMethodData: card() });
    expect(paid.status).toBe('SUCCEEDED');
    await expect.poll(() => seen.map((update) => update.status), { timeout: 10_000 }).toContain('SUCCEEDED');
    expect(seen.map((update) => update.version)).toEqual([...seen.map((update) => update.version)].sort((a, b) => a - b));
    await sdk.close();
  });

  it('rejects a decline with ApiError PAYMENT_DECLINED, and the payment can be paid with another card', async () => {
    const { sdk } = await sdkFor();
    const declined = await sdk.confirm({ paymentMethodData: card('4000000000000002') }).catch((error: unknown) => error);
    expect(declined).toBeInstanceOf(ApiError);
    expect(declined).toMatchObject({ code: 'PAYMENT_DECLINED', message: expect.stringMatching(/declined/) });
    expect((await sdk.confirm({ paymentMethodData: card('5555555555554444') })).status).toBe('SUCCEEDED');
  });

  it('follows a 3D Secure redirect through the navigate function it is given', async () => {
    const { sdk } = await sdkFor({ authenticationType: 'THREE_DS' });
    const challenged = await sdk.confirm({ paymentMethodData: card('4000002500003155') });
    const visited: string[] = [];
    expect(sdk.handleNextAction(challenged, (url) => visited.push(url))).toBe(true);
    expect(visited).toEqual([challenged.nextAction!.redirectToUrl]);
    expect(visited[0]!.startsWith(stack.sandboxUrl)).toBe(true);
    expect(sdk.handleNextAction({ ...challenged, nextAction: null }, (url) => visited.push(url))).toBe(false);
  });

  it('names the field of refused input, and is refused with a wrong client secret', async () => {
    const { payment, sdk } = await sdkFor();
    const refused = await sdk
      .confirm({ paymentMethodData: { card: { number: '4242', expiryMonth: 12, expiryYear: 2040, cvc: '123' } } })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'INVALID_INPUT', field: expect.stringContaining('card.number') });
    const forged = createPaymentsClient({ publishableKey: shop.publishableKey, clientSecret: `${payment.id}_secret_forged`, baseUrl: stack.api.url });
    await expect(forged.payment()).rejects.toMatchObject({ code: expect.stringMatching(/NOT_FOUND|FORBIDDEN|UNAUTHENTICATED/) });
    expect(() => paymentIdOf('not-a-secret')).toThrow(ApiError);
  });

  it('checks cards with the service’s own rules before sending them', () => {
    const now = new Date('2026-11-23T00:00:00Z');
    const valid = { number: '4242 4242 4242 4242', expiryMonth: 12, expiryYear: 2028, cvc: '123' };
    expect(checkCard(valid, now)).toBeNull();
    expect(checkCard({ ...valid, number: '4242424242424241' }, now)?.field).toBe('card.number');
    expect(checkCard({ ...valid, expiryMonth: 10, expiryYear: 2026 }, now)?.field).toBe('card.expiryMonth');
    expect(checkCard({ ...valid, number: '378282246310005', cvc: '123' }, now)).toEqual({ field: 'card.cvc', message: 'must be 4 digits' });
  });
});
