// Disputes at Stripe end to end, against the local fake of Stripe's API (test/fakes/stripe): Stripe's
// charge.dispute.* webhooks (the fixtures' dispute object) open and move our dispute, and the merchant's
// acceptDispute and challengeDispute close it or submit its evidence at Stripe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AcceptDisputeDocument,
  ChallengeDisputeDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  DisputesDocument,
  PaymentDocument,
} from '../gql/graphql.ts';
import type { FakeStripe } from '../fakes/stripe/server.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import type { Stack } from '../support/stack.ts';
import { startStripeShop, type StripeShop } from '../support/stripe-shop.ts';

let fake: FakeStripe;
let stack: Stack;
let shop: StripeShop;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ fake, stack, shop, close } = await startStripeShop());
  // Stripe's events come to us through the endpoint registration creates at Stripe.
  const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
    method: 'POST',
    headers: { 'api-key': shop.secretKey },
  });
  expect(registered.status).toBe(200);
});
afterAll(async () => {
  await close?.();
});

/** A 4242 payment captured at Stripe, then disputed by the customer's bank: charge.dispute.created. Our dispute and Stripe's. */
async function disputedPayment() {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2500, currency: 'EUR', captureMethod: 'AUTOMATIC' } })).createPayment;
  const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }));
  const payment = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment;
  const atStripe = await fake.openDispute(payment.activeAttempt.connectorTransactionId!);
  return { paymentId: created.id, atStripe, ours: async () => dataOf(await shop.secret(DisputesDocument, { paymentId: created.id })).disputes };
}

const requestsTo = (path: string) => fake.requests.filter((request) => request.path === path);

describe('Stripe disputes', () => {
  it('charge.dispute.created opens ours, .updated (evidence submitted at Stripe) challenges it, .closed (won) decides it', async () => {
    const { atStripe, ours } = await disputedPayment();
    const [opened] = await ours();
    expect(opened).toMatchObject({
      status: 'OPENED',
      amount: 2500,
      currency: 'EUR',
      reason: 'fraudulent',
      connector: 'stripe',
      connectorDisputeId: atStripe.id,
      evidenceDueBy: new Date(Number((atStripe.evidence_details as { due_by: number }).due_by) * 1000).toISOString(),
    });

    // The merchant answered in Stripe's Dashboard.
    const underReview = { ...atStripe, status: 'under_review', evidence_details: { ...(atStripe.evidence_details as object), submission_count: 1 } };
    expect(await fake.sendEvent('charge.dispute.updated', underReview)).toEqual([200]);
    expect((await ours())[0]!.status).toBe('CHALLENGED');

    fake.disputes.set(String(atStripe.id), underReview);
    await fake.decideDispute(String(atStripe.id), 'won');
    expect((await ours())[0]!.status).toBe('WON');
  });

  it('acceptDispute closes it at Stripe: ACCEPTED, and Stripe’s charge.dispute.closed (lost, no evidence) leaves it so', async () => {
    const { atStripe, ours } = await disputedPayment();
    const [opened] = await ours();
    const accepted = dataOf(await shop.secret(AcceptDisputeDocument, { input: { disputeId: opened!.id } })).acceptDispute;
    expect(accepted).toMatchObject({ id: opened!.id, status: 'ACCEPTED' });
    expect(requestsTo(`/v1/disputes/${String(atStripe.id)}/close`)).toEqual([
      expect.objectContaining({ method: 'POST', idempotencyKey: `${opened!.id}.accept` }),
    ]);
    expect(fake.disputes.get(String(atStripe.id))?.status).toBe('lost');

    // Stripe's event of the close, however late: a concession, not a lost challenge.
    expect(await fake.sendEvent('charge.dispute.closed', fake.disputes.get(String(atStripe.id))!)).toEqual([200]);
    expect((await ours())[0]!.status).toBe('ACCEPTED');
  });

  it('a lost dispute never answered, reported after its deadline: EXPIRED', async () => {
    const { atStripe, ours } = await disputedPayment();
    const lapsed = { ...atStripe, status: 'lost', evidence_details: { ...(atStripe.evidence_details as object), due_by: Math.floor(Date.now() / 1000) - 60 } };
    expect(await fake.sendEvent('charge.dispute.closed', lapsed)).toEqual([200]);
    expect((await ours())[0]!.status).toBe('EXPIRED');
  });

  it('challengeDispute submits Stripe’s evidence fields with submit=true: CHALLENGED, then the network’s decision (lost): LOST', async () => {
    const { atStripe, ours } = await disputedPayment();
    const [opened] = await ours();
    const evidence = { uncategorized_text: 'The customer signed for the parcel.', shipping_tracking_number: '1Z999AA10123456784' };

    // A field Stripe does not have is refused by Stripe: nothing changes here.
    const refused = errorOf(
      await shop.secret(ChallengeDisputeDocument, { input: { disputeId: opened!.id, evidence: { parcel_photo: 'x' } } }),
      'CONNECTOR_ERROR',
    );
    expect(refused.message).toContain('evidence[parcel_photo]');
    expect((await ours())[0]!.status).toBe('OPENED');

    const challenged = dataOf(await shop.secret(ChallengeDisputeDocument, { input: { disputeId: opened!.id, evidence } })).challengeDispute;
    expect(challenged).toMatchObject({ status: 'CHALLENGED', evidence });
    expect(requestsTo(`/v1/disputes/${String(atStripe.id)}`).at(-1)).toMatchObject({
      method: 'POST',
      idempotencyKey: `${opened!.id}.challenge`,
      params: { evidence, submit: 'true' },
    });
    expect(fake.disputes.get(String(atStripe.id))).toMatchObject({ status: 'under_review', evidence: expect.objectContaining(evidence) });

    await fake.decideDispute(String(atStripe.id), 'lost');
    expect((await ours())[0]!.status).toBe('LOST');
  });
});
