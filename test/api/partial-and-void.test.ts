// Partial authorization and the void after capture over HTTP, against the sandbox: a profile that allows it
// gets PARTIALLY_AUTHORIZED (payment_partially_authorized) for the card with too little funds, then captures
// what was authorized; a captured card payment voided at the processor (cancelPaymentPostCapture; cancelPayment
// refuses it) is CANCELLED_POST_CAPTURE (payment_cancelled_post_capture) with nothing left to refund, and never
// once refunds or disputes hold part of it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CancelPaymentDocument,
  CancelPaymentPostCaptureDocument,
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  PaymentDocument,
  UpdateBusinessProfileDocument,
  type CreatePaymentInput,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let shop: Shop;
beforeAll(async () => {
  stack = await startStack({ sandboxBankDebitSettleMs: 200 });
  shop = await shopWithReceiver(stack);
});
afterAll(async () => {
  await stack.close();
});

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

async function confirmed(merchant: Shop, number: string, extra: Partial<CreatePaymentInput> = {}) {
  const created = dataOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 4001, currency: 'EUR', ...extra } })).createPayment;
  return merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } });
}

describe('partial authorization', () => {
  it('is a decline unless the profile allows it', async () => {
    const declined = errorOf(await confirmed(shop, '4000000000001976', { captureMethod: 'MANUAL' }), 'PAYMENT_DECLINED');
    expect(declined.extensions).toMatchObject({ declineCode: 'insufficient_funds' });
  });

  it('holds what the card covers (payment_partially_authorized), to capture or cancel', async () => {
    const allowing = await shopWithReceiver(stack);
    const profile = dataOf(await allowing.secret(UpdateBusinessProfileDocument, { input: { profileId: allowing.profileId, allowPartialAuthorization: true } }));
    expect(profile.updateBusinessProfile.businessProfile.allowPartialAuthorization).toBe(true);
    const held = dataOf(await confirmed(allowing, '4000000000001976', { captureMethod: 'MANUAL' })).confirmPayment;
    expect(held).toMatchObject({ status: 'PARTIALLY_AUTHORIZED', amount: 4001, amountCapturable: 2000, activeAttempt: { status: 'PARTIALLY_AUTHORIZED' } });
    await eventReaching(allowing, held.id, 'PAYMENT_PARTIALLY_AUTHORIZED', 'DELIVERED');
    errorOf(await allowing.secret(CapturePaymentDocument, { input: { paymentId: held.id, amountToCapture: 2001 } }), 'INVALID_INPUT');
    const captured = dataOf(await allowing.secret(CapturePaymentDocument, { input: { paymentId: held.id } })).capturePayment;
    expect(captured).toMatchObject({ status: 'PARTIALLY_CAPTURED', amountReceived: 2000 });

    const another = dataOf(await confirmed(allowing, '4000000000001976', { captureMethod: 'MANUAL' })).confirmPayment;
    expect(dataOf(await allowing.secret(CancelPaymentDocument, { input: { paymentId: another.id } })).cancelPayment.status).toBe('CANCELLED');
  });

  it('never applies to payments captured at once: those are declined', async () => {
    const allowing = await shopWithReceiver(stack);
    dataOf(await allowing.secret(UpdateBusinessProfileDocument, { input: { profileId: allowing.profileId, allowPartialAuthorization: true } }));
    errorOf(await confirmed(allowing, '4000000000001976'), 'PAYMENT_DECLINED');
  });
});

describe('void after capture', () => {
  it('is not a cancel: cancelPayment of a SUCCEEDED payment is INVALID_STATE naming SUCCEEDED, and changes nothing', async () => {
    const paid = dataOf(await confirmed(shop, '4242424242424242')).confirmPayment;
    const refused = errorOf(await shop.secret(CancelPaymentDocument, { input: { paymentId: paid.id } }), 'INVALID_STATE');
    expect(refused.message).toMatch(/^Cannot cancel a payment in status SUCCEEDED /);
    expect(refused.extensions).toMatchObject({ status: 'SUCCEEDED' });
    const after = dataOf(await shop.secret(PaymentDocument, { id: paid.id })).payment!;
    expect(after).toMatchObject({ status: 'SUCCEEDED', amountReceived: 4001, version: paid.version });
  });

  it('gives the money back (payment_cancelled_post_capture); nothing is left to refund', async () => {
    const paid = dataOf(await confirmed(shop, '4242424242424242')).confirmPayment;
    const voided = dataOf(
      await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: paid.id, cancellationReason: 'duplicate order' } }),
    ).cancelPaymentPostCapture;
    expect(voided).toMatchObject({
      status: 'CANCELLED_POST_CAPTURE',
      amountReceived: 0,
      cancellationReason: 'duplicate order',
      activeAttempt: { status: 'VOIDED_POST_CHARGE' },
    });
    await eventReaching(shop, paid.id, 'PAYMENT_CANCELLED_POST_CAPTURE', 'DELIVERED');
    errorOf(await shop.secret(CreateRefundDocument, { input: { paymentId: paid.id } }), 'INVALID_STATE');
    const again = [
      await shop.secret(CancelPaymentDocument, { input: { paymentId: paid.id } }),
      await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: paid.id } }),
    ];
    for (const answer of again) expect(errorOf(answer, 'INVALID_STATE').extensions).toMatchObject({ status: 'CANCELLED_POST_CAPTURE' });
  });

  it('is refused before capture: an authorization is cancelled with cancelPayment', async () => {
    const authorized = dataOf(await confirmed(shop, '4242424242424242', { captureMethod: 'MANUAL' })).confirmPayment;
    const refused = errorOf(await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: authorized.id } }), 'INVALID_STATE');
    expect(refused.message).toMatch(/^Cannot cancel after capture a payment in status REQUIRES_CAPTURE /);
  });

  it('is refused once a refund holds part of the payment, and the payment stays SUCCEEDED', async () => {
    const paid = dataOf(await confirmed(shop, '4242424242424242')).confirmPayment;
    dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: paid.id, amount: 1 } }));
    const refused = errorOf(await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: paid.id } }), 'INVALID_STATE');
    expect(refused.message).toMatch(/^A SUCCEEDED payment with refunds cannot be voided after capture/);
    const again = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: paid.id } })).createRefund;
    expect(again).toMatchObject({ status: 'SUCCEEDED', amount: 4000 });
  });

  it('refused by the processor (not a card) leaves the payment SUCCEEDED, with no second payment_succeeded', async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4000, currency: 'EUR' } })).createPayment;
    const debit = { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } };
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: debit } }));
    await vi.waitFor(async () => expect((await eventsOf(shop, created.id)).map((event) => event.eventType)).toContain('PAYMENT_SUCCEEDED'), {
      timeout: 10_000,
      interval: 50,
    });
    const refusal = errorOf(await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: created.id } }), 'INVALID_STATE');
    expect(refusal.message).toMatch(/^The processor refused the void: .*only card payments can be voided after capture/);
    expect(refusal.extensions).toMatchObject({ status: 'SUCCEEDED', paymentId: created.id });
    const after = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
    expect(after.status).toBe('SUCCEEDED');
    expect(
      after.history
        .filter((row) => row.subject === 'attempt')
        .map((row) => row.toStatus)
        .slice(-2),
    ).toEqual(['VOID_POST_CHARGE_INITIATED', 'CHARGED']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await eventsOf(shop, created.id)).map((event) => event.eventType).sort()).toEqual(['PAYMENT_PROCESSING', 'PAYMENT_SUCCEEDED']);
  });

  it('races with refunds without ever refunding a voided payment', async () => {
    const paid = dataOf(await confirmed(shop, '4242424242424242')).confirmPayment;
    const [voided, ...refunds] = await Promise.all([
      shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: paid.id } }),
      ...Array.from({ length: 5 }, () => shop.secret(CreateRefundDocument, { input: { paymentId: paid.id, amount: 100 } })),
    ]);
    const refunded = refunds.filter((result) => result.data?.createRefund?.status === 'SUCCEEDED').length;
    if (voided!.data?.cancelPaymentPostCapture?.status === 'CANCELLED_POST_CAPTURE') expect(refunded).toBe(0);
    else expect(refunded).toBeGreaterThan(0);
  });
});
