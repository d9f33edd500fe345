// Saved cards and mandates at Stripe through our GraphQL API, against the local fake of Stripe's API
// (test/fakes/stripe): a card saved on confirm is set up for off-session use with a Customer of its own
// (docs.stripe.com/payments/save-during-payment), paid again with its Customer and a CVC token, and charged off
// session under a mandate, where Stripe's test cards that need the customer decline `authentication_required`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, CustomerDocument, PaymentMandateDocument } from '../gql/graphql.ts';
import type { FakeStripe } from '../fakes/stripe/server.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStripeShop, type StripeShop } from '../support/stripe-shop.ts';

let fake: FakeStripe;
let shop: StripeShop;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ fake, shop, close } = await startStripeShop());
});
afterAll(async () => {
  await close?.();
});

const CARDS = { success: '4242424242424242', authenticateUnlessSetUp: '4000002500003155', alwaysAuthenticate: '4000002760003184' };
const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });
let customers = 0;
const newCustomer = () => `cus_stripe_saved_${Date.now()}_${++customers}`;

const createPayment = async (customerId: string, extra: { setupFutureUsage?: 'OFF_SESSION' } = {}) =>
  dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1500, currency: 'EUR', customerId, ...extra } })).createPayment;

/** The PaymentIntent Stripe was asked for, by our attempt id (its Idempotency-Key). */
const intentRequest = (attemptId: string) => fake.requests.find((request) => request.path === '/v1/payment_intents' && request.idempotencyKey === attemptId)!;

/** The customer's card, saved by a paid confirm (with savePaymentMethod, or a setup for off-session use): its saved method. */
async function saveCard(number: string, customerId: string, how: 'savePaymentMethod' | 'setup') {
  const created = await createPayment(customerId, how === 'setup' ? { setupFutureUsage: 'OFF_SESSION' } : {});
  const confirmed = dataOf(
    await shop.publishable(ConfirmPaymentDocument, {
      input: { clientSecret: created.clientSecret, paymentMethodData: card(number), ...(how === 'savePaymentMethod' ? { savePaymentMethod: true } : {}) },
    }),
  ).confirmPayment;
  return { created, confirmed };
}

/** The customer passes 3DS at Stripe's page and comes back through our redirect route (a page of ours: no returnUrl). */
async function authenticate(redirectToUrl: string) {
  const completed = await fetch(`${redirectToUrl}/complete`, { method: 'POST', redirect: 'manual' });
  expect((await fetch(completed.headers.get('location')!, { redirect: 'manual' })).status).toBe(200);
}

describe('saved cards at Stripe', () => {
  it('saved on confirm: a Customer of its own, setup_future_usage=off_session; listed on our customer; paid again with the Customer, the PaymentMethod and a CVC token', async () => {
    const customerId = newCustomer();
    const { confirmed } = await saveCard(CARDS.success, customerId, 'savePaymentMethod');
    expect(confirmed.status).toBe('SUCCEEDED');
    const attemptId = confirmed.activeAttempt.id;
    const customerCall = fake.requests.find((request) => request.path === '/v1/customers' && request.idempotencyKey === `${attemptId}.customer`);
    expect(customerCall?.params).toEqual({ metadata: { reference: attemptId } });
    const first = fake.intents.get(confirmed.activeAttempt.connectorTransactionId!)!;
    expect(intentRequest(attemptId).params).toMatchObject({ setup_future_usage: 'off_session', customer: first.customer });
    expect(first.customer).toMatch(/^cus_/);

    const { savedPaymentMethods } = dataOf(await shop.secret(CustomerDocument, { id: customerId })).customer;
    expect(savedPaymentMethods).toMatchObject([{ customerId, connector: 'stripe', last4: '4242' }]);

    const second = await createPayment(customerId);
    const again = dataOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: second.clientSecret, paymentMethodId: savedPaymentMethods[0]!.id, cardCvc: '321' },
      }),
    ).confirmPayment;
    expect(again).toMatchObject({ status: 'SUCCEEDED', activeAttempt: { savedPaymentMethodId: savedPaymentMethods[0]!.id } });
    const sent = intentRequest(again.activeAttempt.id).params;
    expect(sent).toMatchObject({
      customer: first.customer,
      payment_method: first.payment_method,
      payment_method_options: { card: { cvc_token: expect.stringMatching(/^cvctok_/) } },
    });
    expect(sent).not.toHaveProperty('payment_method_data');
    expect(sent).not.toHaveProperty('off_session');
    // The CVC went to Stripe once, for its token, never with the intent.
    const cvcCall = fake.requests.find((request) => request.path === '/v1/tokens' && request.idempotencyKey === `${again.activeAttempt.id}.cvc`);
    expect(cvcCall?.params).toEqual({ cvc_update: { cvc: '321' } });
  });

  it('a setup for off-session use makes a mandate; a merchant-initiated payment under it is sent off_session and succeeds, even with a card that needed 3DS on session', async () => {
    const customerId = newCustomer();
    const { created, confirmed } = await saveCard(CARDS.authenticateUnlessSetUp, customerId, 'setup');
    // On session the card needs the customer: Stripe's 3DS page, then our redirect route.
    expect(confirmed.status).toBe('REQUIRES_CUSTOMER_ACTION');
    await authenticate(confirmed.nextAction!.redirectToUrl!);
    const { payment } = dataOf(await shop.secret(PaymentMandateDocument, { id: created.id }));
    expect(payment).toMatchObject({ status: 'SUCCEEDED', createdMandate: { status: 'ACTIVE', customerId } });
    const setupIntent = fake.intents.get(confirmed.activeAttempt.connectorTransactionId!)!;

    const charged = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 2500, currency: 'EUR', mandateId: payment!.createdMandate!.id, confirm: true } }),
    ).createPayment;
    expect(charged.status).toBe('SUCCEEDED');
    expect(intentRequest(charged.activeAttempt.id).params).toMatchObject({
      customer: setupIntent.customer,
      payment_method: setupIntent.payment_method,
      off_session: 'true',
      confirm: 'true',
    });
  });

  it('a card that always needs the customer is declined off session: authentication_required from the decline catalog', async () => {
    const customerId = newCustomer();
    const { created, confirmed } = await saveCard(CARDS.alwaysAuthenticate, customerId, 'setup');
    await authenticate(confirmed.nextAction!.redirectToUrl!);
    const { payment } = dataOf(await shop.secret(PaymentMandateDocument, { id: created.id }));
    expect(payment).toMatchObject({ status: 'SUCCEEDED', createdMandate: { status: 'ACTIVE' } });
    const mandate = payment!.createdMandate!;
    const declined = errorOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 2500, currency: 'EUR', mandateId: mandate.id, confirm: true } }),
      'PAYMENT_DECLINED',
    );
    expect(declined.extensions).toMatchObject({ declineCode: 'authentication_required', processorCode: 'authentication_required', status: 'FAILED' });
  });
});
