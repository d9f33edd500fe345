// Surcharges over HTTP: a profile's rule shown to the SDK in paymentMethods, added at confirm (the processor
// charges amount + surcharge), surcharge_payment_succeeded beside payment_succeeded, and
// surcharge_refund_succeeded when a refund returns the surcharge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, CreateRefundDocument, PaymentMethodsDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let shop: Shop;
beforeAll(async () => {
  stack = await startStack();
  shop = await shopWithReceiver(stack);
  const updated = dataOf(
    await shop.secret(UpdateBusinessProfileDocument, {
      input: { profileId: shop.profileId, surcharges: [{ paymentMethodType: 'CARD', fixedAmount: 30, percentBps: 250 }] },
    }),
  );
  expect(updated.updateBusinessProfile.businessProfile.surcharges).toEqual([{ paymentMethodType: 'CARD', fixedAmount: 30, percentBps: 250 }]);
});
afterAll(async () => {
  await stack.close();
});

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

async function surchargedPayment() {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 10_000, currency: 'USD' } })).createPayment;
  return {
    created,
    paid: dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } })).confirmPayment,
  };
}

describe('surcharges', () => {
  it('are shown to the SDK per method before the customer chooses', async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 10_000, currency: 'USD' } })).createPayment;
    const { methods } = dataOf(await shop.publishable(PaymentMethodsDocument, { clientSecret: created.clientSecret })).paymentMethods;
    expect(methods.find((method) => method.type === 'CARD')).toMatchObject({ surchargeAmount: 280, totalAmount: 10_280 });
    expect(methods.find((method) => method.type === 'BANK_DEBIT')).toMatchObject({ surchargeAmount: 0, totalAmount: 10_000 });
  });

  it('are added at confirm and charged by the processor, with surcharge_payment_succeeded beside payment_succeeded', async () => {
    const { paid } = await surchargedPayment();
    expect(paid).toMatchObject({ status: 'SUCCEEDED', amount: 10_000, surchargeAmount: 280, amountReceived: 10_280 });
    const processor = await (
      await fetch(`${stack.sandboxUrl}/v1/payments/${paid.activeAttempt.connectorTransactionId}`, { headers: { authorization: `Bearer ${shop.sandboxKey}` } })
    ).json();
    expect(processor.amount_captured).toBe(10_280);
    const surcharge = await eventReaching(shop, paid.id, 'SURCHARGE_PAYMENT_SUCCEEDED', 'DELIVERED');
    await eventReaching(shop, paid.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    const body = shop.receiver.bodies().find((candidate) => candidate.event_id === surcharge.id)!;
    expect(body.content).toMatchObject({
      type: 'payment_details',
      object: { payment_id: paid.id, status: 'succeeded', surcharge_amount: 280, amount_received: 10_280 },
    });
  });

  it('are returned last: only the refund that passes the amount sends surcharge_refund_succeeded', async () => {
    const { paid } = await surchargedPayment();
    const first = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: paid.id, amount: 10_000 } })).createRefund;
    const rest = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: paid.id } })).createRefund;
    expect(rest).toMatchObject({ status: 'SUCCEEDED', amount: 280 });
    await eventReaching(shop, rest.id, 'SURCHARGE_REFUND_SUCCEEDED', 'DELIVERED');
    await eventReaching(shop, first.id, 'REFUND_SUCCEEDED', 'DELIVERED');
    expect((await eventsOf(shop, first.id)).map((event) => event.eventType)).toEqual(['REFUND_SUCCEEDED']);
  });

  it('refuse rules that break a limit, naming the field, and change nothing', async () => {
    const error = errorOf(
      await shop.secret(UpdateBusinessProfileDocument, {
        input: { profileId: shop.profileId, surcharges: [{ paymentMethodType: 'CARD', percentBps: 2_001 }] },
      }),
      'INVALID_INPUT',
    );
    expect(error.extensions).toMatchObject({ field: 'surcharges.0.percentBps' });
    const { paid } = await surchargedPayment();
    expect(paid.surchargeAmount).toBe(280);
  });
});
