// Subscriptions over HTTP: the worker's sweep charges a customer's mandate every period (one
// invoice_paid per paid period, subscription_details), never charges a period twice, and stops at a
// revoked mandate (PAST_DUE) or a cancellation.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CancelSubscriptionDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CreateSubscriptionDocument,
  PaymentMandateDocument,
  RecurringSubscriptionDocument,
  RevokeMandateDocument,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { ownDatabase } from '../support/database.ts';
import type { ScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';

/** A database of this file's own: its worker sweeps, and a sweep acts on every row of its database (docs/development.md). */
let database: ScratchDatabase;
let stack: Stack;
let shop: Shop;
let sql: pg.Client;
beforeAll(async () => {
  database = await ownDatabase();
  stack = await startStack({ env: { DATABASE_URL: database.url, SUBSCRIPTION_SWEEP_MS: '100' } });
  shop = await shopWithReceiver(stack);
  sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
  await database.drop();
});

let customers = 0;
async function mandate() {
  const customerId = `cus_recurring_${Date.now()}_${++customers}`;
  const created = dataOf(
    await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', customerId, setupFutureUsage: 'OFF_SESSION' } }),
  ).createPayment;
  const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }));
  const { payment } = dataOf(await shop.secret(PaymentMandateDocument, { id: created.id }));
  return { customerId, mandateId: payment!.createdMandate!.id };
}

const subscribe = async (customerId: string, mandateId: string) =>
  dataOf(await shop.secret(CreateSubscriptionDocument, { input: { customerId, mandateId, amount: 1999, currency: 'EUR', interval: 'MONTH' } }))
    .createSubscription;
const read = async (id: string) => dataOf(await shop.secret(RecurringSubscriptionDocument, { id })).subscription!;
/** Brings the next period forward, as if a month had passed. */
/** How long a sweep may take to charge a due period: generous, for a busy 2-CPU machine running the whole suite. */
const SWEPT = { timeout: 15_000, interval: 50 };
const monthPasses = (id: string) => sql.query(`UPDATE subscriptions SET next_charge_at = now() - interval '1 second' WHERE id = $1`, [id]);

describe('subscriptions', () => {
  it('charge the mandate every period, each paid period sending invoice_paid with the invoice', async () => {
    const { customerId, mandateId } = await mandate();
    const subscription = await subscribe(customerId, mandateId);
    expect(subscription).toMatchObject({ status: 'ACTIVE', paidPeriods: 0, interval: 'MONTH', intervalCount: 1 });
    await vi.waitFor(async () => expect((await read(subscription.id)).paidPeriods).toBe(1), SWEPT);
    const first = await read(subscription.id);
    const nextChargeInDays = (new Date(first.nextChargeAt).getTime() - Date.now()) / 86_400_000;
    expect(nextChargeInDays).toBeGreaterThan(27);
    const event = await eventReaching(shop, subscription.id, 'INVOICE_PAID', 'DELIVERED');
    const body = shop.receiver.bodies().find((candidate) => candidate.event_id === event.id)!;
    expect(body.content).toMatchObject({
      type: 'subscription_details',
      object: {
        subscription_id: subscription.id,
        status: 'active',
        customer_id: customerId,
        mandate_id: mandateId,
        paid_periods: 1,
        invoice: { period: 1, payment_id: first.lastPaymentId, amount_paid: 1999, currency: 'EUR' },
      },
    });
    await monthPasses(subscription.id);
    await vi.waitFor(async () => expect((await read(subscription.id)).paidPeriods).toBe(2), SWEPT);
    await vi.waitFor(
      async () => expect((await eventsOf(shop, subscription.id)).filter((candidate) => candidate.eventType === 'INVOICE_PAID')).toHaveLength(2),
      SWEPT,
    );
    const charges = await sql.query(`SELECT status FROM payment_intents WHERE mandate_id = $1`, [mandateId]);
    expect(charges.rows).toEqual([{ status: 'SUCCEEDED' }, { status: 'SUCCEEDED' }]);
  });

  it('never charge a period twice, even when a worker died after charging it (the period is a unique key of its payment)', async () => {
    const { customerId, mandateId } = await mandate();
    const subscription = await subscribe(customerId, mandateId);
    await vi.waitFor(async () => expect((await read(subscription.id)).paidPeriods).toBe(1), SWEPT);
    // As if the worker had charged period 2 and died before recording it: the next sweep records it.
    const charged = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1999, currency: 'EUR', mandateId, confirm: true } })).createPayment;
    await sql.query(`UPDATE payment_intents SET subscription_period = $1, version = version + 1 WHERE id = $2`, [`${subscription.id}:2`, charged.id]);
    await monthPasses(subscription.id);
    await vi.waitFor(async () => expect((await read(subscription.id)).paidPeriods).toBe(2), SWEPT);
    expect((await read(subscription.id)).lastPaymentId).toBe(charged.id);
    const charges = await sql.query(`SELECT count(*)::int AS n FROM payment_intents WHERE mandate_id = $1`, [mandateId]);
    expect(charges.rows[0].n).toBe(2);
    await expect(
      sql.query(`UPDATE payment_intents SET subscription_period = $1 WHERE id <> $2 AND mandate_id = $3`, [`${subscription.id}:2`, charged.id, mandateId]),
    ).rejects.toThrow(/unique/);
  });

  it('go PAST_DUE at a revoked mandate, charging nothing', async () => {
    const { customerId, mandateId } = await mandate();
    const subscription = await subscribe(customerId, mandateId);
    await vi.waitFor(async () => expect((await read(subscription.id)).paidPeriods).toBe(1), SWEPT);
    dataOf(await shop.secret(RevokeMandateDocument, { input: { mandateId } }));
    await monthPasses(subscription.id);
    await vi.waitFor(async () => expect((await read(subscription.id)).status).toBe('PAST_DUE'), SWEPT);
    expect((await read(subscription.id)).errorCode).toBe('invalid_state');
    const charges = await sql.query(`SELECT count(*)::int AS n FROM payment_intents WHERE mandate_id = $1`, [mandateId]);
    expect(charges.rows[0].n).toBe(1);
  });

  it('stop when cancelled, and refuse a revoked mandate from the start', async () => {
    const { customerId, mandateId } = await mandate();
    const later = dataOf(
      await shop.secret(CreateSubscriptionDocument, {
        input: { customerId, mandateId, amount: 500, currency: 'EUR', interval: 'WEEK', startAt: new Date(Date.now() + 3_600_000).toISOString() },
      }),
    ).createSubscription;
    expect(dataOf(await shop.secret(CancelSubscriptionDocument, { input: { subscriptionId: later.id } })).cancelSubscription.status).toBe('CANCELLED');
    await monthPasses(later.id);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await read(later.id)).toMatchObject({ status: 'CANCELLED', paidPeriods: 0 });
    errorOf(await shop.secret(CancelSubscriptionDocument, { input: { subscriptionId: later.id } }), 'INVALID_STATE');
    dataOf(await shop.secret(RevokeMandateDocument, { input: { mandateId } }));
    errorOf(
      await shop.secret(CreateSubscriptionDocument, { input: { customerId, mandateId, amount: 500, currency: 'EUR', interval: 'WEEK' } }),
      'INVALID_STATE',
    );
    const invalid = errorOf(
      await shop.secret(CreateSubscriptionDocument, { input: { customerId, mandateId, amount: 0, currency: 'EUR', interval: 'WEEK' } }),
      'INVALID_INPUT',
    );
    expect(invalid.extensions).toMatchObject({ field: 'amount' });
  });
});
