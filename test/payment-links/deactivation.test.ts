// Deactivating a payment link (one the merchant no longer sells through, or one used for card testing):
// its page says it is no longer active, every use is refused and nothing is written; its payments stay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePaymentLinkDocument, DeactivatePaymentLinkDocument, PaymentLinkDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(async () => {
  await stack.close();
});

const use = (id: string) =>
  fetch(`${stack.api.url}/payment-links/${id}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

describe('a deactivated payment link', () => {
  it('says it is no longer active and refuses every use, keeping the payments made through it', async () => {
    const shop = await merchantWithSandbox(stack);
    const link = dataOf(
      await shop.secret(CreatePaymentLinkDocument, { input: { amount: 2500, currency: 'EUR', description: 'Concert ticket' } }),
    ).createPaymentLink;
    const before = await (await use(link.id)).json();
    const deactivated = dataOf(await shop.secret(DeactivatePaymentLinkDocument, { input: { paymentLinkId: link.id } })).deactivatePaymentLink;
    expect(deactivated).toMatchObject({ id: link.id, active: false, deactivatedAt: expect.any(String) });
    for (const answer of [await fetch(`${stack.api.url}/payment-links/${link.id}`), await use(link.id)]) {
      expect(answer.status).toBe(410);
      expect((await answer.json()).error).toEqual({
        code: 'INVALID_STATE',
        message: 'This payment link is no longer active: the merchant deactivated it.',
        requestId: answer.headers.get('x-request-id'),
        docs: 'docs/api.md#error-invalid-state',
      });
    }
    const payments = dataOf(await shop.secret(PaymentLinkDocument, { id: link.id })).paymentLink!.payments;
    expect(payments.map((payment) => payment.id)).toEqual([before.payment_id]);
    // Deactivating again changes nothing; another merchant cannot see the link at all.
    expect(dataOf(await shop.secret(DeactivatePaymentLinkDocument, { input: { paymentLinkId: link.id } })).deactivatePaymentLink.deactivatedAt).toBe(
      deactivated.deactivatedAt,
    );
    const stranger = await merchantWithSandbox(stack);
    errorOf(await stranger.secret(DeactivatePaymentLinkDocument, { input: { paymentLinkId: link.id } }), 'NOT_FOUND');
    errorOf(await shop.publishable(DeactivatePaymentLinkDocument, { input: { paymentLinkId: link.id } }), 'FORBIDDEN');
  });
});
