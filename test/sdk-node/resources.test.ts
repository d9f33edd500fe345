// The server SDK's other resources against the real API, worker and sandbox: the key's merchant and its business
// profiles, events (listed across pages, streamed live with a replay from `after`, sent again), payment links,
// customers' saved cards, a paid payment voided after capture, disputes the sandbox opens, and payouts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidStateError, Payments } from '@payments-orchestrator/node';
import { startStack, type Stack } from '../support/stack.ts';
import { card, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let shop: Shop;
let payments: Payments;
beforeAll(async () => {
  stack = await startStack({ sandboxDisputeOpenMs: 200, sandboxPayoutSettleMs: 60_000 });
  shop = await shopWithReceiver(stack);
  // The sandbox tells the service of disputes by callback (docs/sandbox.md, "Disputes").
  const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
    method: 'POST',
    headers: { 'api-key': shop.secretKey },
  });
  expect(registered.status).toBe(200);
  payments = new Payments({ apiKey: shop.secretKey, baseUrl: stack.api.url });
});
afterAll(async () => {
  await payments?.close();
  await stack?.close();
});

async function paid(number = '4242424242424242', input: { customerId?: string } = {}) {
  const created = await payments.payments.create({ amount: 5000, currency: 'EUR', ...input });
  return payments.payments.confirm(created, { paymentMethodData: card(number), ...(input.customerId ? { savePaymentMethod: true } : {}) });
}

/** The first `count` items of `iterable`; breaking out of the loop ends it. */
async function firstOf<Item>(iterable: AsyncIterable<Item>, count: number): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of iterable) if (items.push(item) === count) break;
  return items;
}

describe('the server SDK’s resources', () => {
  it('events: listed across pages, retrieved with their delivery attempts, sent again', async () => {
    const payment = await paid();
    const listed = await firstOf(payments.events.list({ objectId: payment.id, first: 1 }), 10);
    expect(listed.map((event) => event.eventType)).toContain('PAYMENT_SUCCEEDED');
    const succeeded = listed.find((event) => event.eventType === 'PAYMENT_SUCCEEDED')!;
    const delivered = await vi.waitFor(
      async () => {
        const event = await payments.events.retrieve(succeeded.id);
        expect(event.deliveryStatus).toBe('DELIVERED');
        return event;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(delivered.attempts[0]).toMatchObject({ kind: 'INITIAL', responseStatus: 204 });
    expect(JSON.parse(delivered.body)).toMatchObject({ event_type: 'payment_succeeded', content: { object: { payment_id: payment.id } } });
    const retried = await payments.events.retry(succeeded.id);
    expect(retried.id).toBe(succeeded.id);
    await vi.waitFor(async () => expect((await payments.events.retrieve(succeeded.id)).attempts.map((attempt) => attempt.kind)).toContain('MANUAL_RETRY'), {
      timeout: 10_000,
      interval: 100,
    });
  });

  it('events.live: those since `after` first, then each new one as it is created, filtered by type, without gaps or repeats', async () => {
    const before = await paid();
    const missed = await paid();
    const [since] = await firstOf(payments.events.list({ objectId: before.id, eventTypes: ['PAYMENT_SUCCEEDED'] }), 1);
    const arriving = firstOf(payments.events.live({ profileId: shop.profileId, after: since!.id, eventTypes: ['PAYMENT_SUCCEEDED'] }), 2);
    const next = await paid();
    const streamed = await arriving;
    expect(streamed.map((event) => [event.eventType, event.objectId])).toEqual([
      ['PAYMENT_SUCCEEDED', missed.id],
      ['PAYMENT_SUCCEEDED', next.id],
    ]);
  });

  it('payment links: created, retrieved, deactivated', async () => {
    const link = await payments.paymentLinks.create({ amount: 2500, currency: 'EUR', description: 'Gift card' });
    expect(link).toMatchObject({ active: true, amount: 2500, url: expect.stringContaining(link.id) });
    expect(await payments.paymentLinks.retrieve(link.id)).toMatchObject({ id: link.id, description: 'Gift card' });
    expect(await payments.paymentLinks.deactivate(link.id)).toMatchObject({ active: false, deactivatedAt: expect.any(String) });
  });

  it('merchant: the key’s own, whose id webhooks name', async () => {
    expect(await payments.merchant.retrieve()).toEqual({ id: shop.merchantId });
  });

  it('business profiles: the merchant’s, with the key’s mode’s settings', async () => {
    const profiles = await firstOf(payments.businessProfiles.list(), 100);
    expect(profiles).toEqual([
      expect.objectContaining({ id: shop.profileId, isDefault: true, allowPartialAuthorization: false, payoutLimit: null, surcharges: [] }),
    ]);
    expect(profiles[0]!.sessionExpirySeconds).toBeGreaterThan(0);
  });

  it('payments.cancelPostCapture: a paid payment voided at the processor, nothing received', async () => {
    const payment = await paid();
    expect(await payments.payments.cancelPostCapture(payment.id, { cancellationReason: 'order lost' })).toMatchObject({
      id: payment.id,
      status: 'CANCELLED_POST_CAPTURE',
      amountReceived: 0,
      cancellationReason: 'order lost',
    });
  });

  it('customers: the cards their payments saved', async () => {
    const customerId = `cus_sdk_${Date.now()}`;
    await paid('5555555555554444', { customerId });
    expect(await payments.customers.retrieve(customerId)).toMatchObject({ id: customerId, savedPaymentMethods: [{ customerId, last4: '4444' }] });
  });

  it('disputes: the one the sandbox opens on the dispute test card is listed, retrieved and accepted', async () => {
    const payment = await paid('4000000000000259');
    const [opened] = await vi.waitFor(
      async () => {
        const disputes = await firstOf(payments.disputes.list({ paymentId: payment.id }), 1);
        expect(disputes).toHaveLength(1);
        return disputes;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(await payments.disputes.retrieve(opened!.id)).toMatchObject({ paymentId: payment.id, status: 'OPENED', reason: 'fraudulent' });
    expect((await payments.disputes.accept(opened!.id)).status).toBe('ACCEPTED');
    const refused = await payments.disputes.challenge(opened!.id, { note: 'too late' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidStateError);
    expect(refused).toMatchObject({ status: 'ACCEPTED' });
  });

  it('payouts: created, retrieved, listed, cancelled before they are sent', async () => {
    const destination = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, holderName: 'Ada Lovelace' } };
    const payout = await payments.payouts.create({ amount: 5000, currency: 'EUR', destination });
    expect(payout).toMatchObject({ status: 'INITIATED', destination: { type: 'card', last4: '4242' } });
    expect((await payments.payouts.retrieve(payout.id)).id).toBe(payout.id);
    expect((await firstOf(payments.payouts.list({ status: 'INITIATED' }), 100)).map((listed) => listed.id)).toContain(payout.id);
    expect((await payments.payouts.cancel(payout.id)).status).toBe('CANCELLED');
  });
});
