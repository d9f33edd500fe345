// Session expiry over HTTP: a payment not confirmed within its profile's session expiry is expired by the
// worker's sweep (payment_expired, delivered), or at the confirm that comes too late; a confirmed one never is.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { ownDatabase } from '../support/database.ts';
import type { ScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { eventReaching, shopWithReceiver, type Shop } from '../support/webhooks.ts';
import { startTestWorker } from '../support/worker.ts';

/** A database of this file's own: its worker sweeps, and a sweep acts on every row of its database (docs/development.md). */
let database: ScratchDatabase;
let stack: Stack;
let sql: pg.Client;
let shop: Shop;
beforeAll(async () => {
  database = await ownDatabase();
  stack = await startStack({ env: { DATABASE_URL: database.url, PAYMENT_EXPIRY_SWEEP_MS: '100' } });
  sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  shop = await shopWithReceiver(stack);
});
afterAll(async () => {
  await sql.end();
  await stack.close();
  await database.drop();
});

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };
const create = async () => dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
/** Moves a payment's expiry into the past, as if its session expiry had run out. */
const runOut = (paymentId: string) =>
  sql.query(`UPDATE payment_intents SET expires_at = now() - interval '1 second', version = version + 1 WHERE id = $1`, [paymentId]);
const statusOf = async (id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment?.status;

describe('session expiry', () => {
  it('is 15 minutes by default, set per profile within 60 s to 90 days', async () => {
    const payment = await create();
    const minutes = (new Date(payment.expiresAt!).getTime() - Date.now()) / 60_000;
    expect(minutes).toBeGreaterThan(14.9);
    expect(minutes).toBeLessThanOrEqual(15);
    for (const bad of [59, 7_776_001, 1.5]) {
      const error = errorOf(
        await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, sessionExpirySeconds: bad } }),
        'INVALID_INPUT',
      );
      expect(error.extensions).toMatchObject({ field: 'sessionExpirySeconds' });
    }
    const updated = dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, sessionExpirySeconds: 3600 } }));
    expect(updated.updateBusinessProfile.businessProfile.sessionExpirySeconds).toBe(3600);
    const later = await create();
    expect((new Date(later.expiresAt!).getTime() - Date.now()) / 60_000).toBeGreaterThan(59.9);
  });

  it('expires an unconfirmed payment in the worker’s sweep and sends payment_expired', async () => {
    const payment = await create();
    await runOut(payment.id);
    await vi.waitFor(async () => expect(await statusOf(payment.id)).toBe('EXPIRED'), { timeout: 5000, interval: 50 });
    const read = dataOf(await shop.secret(PaymentDocument, { id: payment.id })).payment!;
    expect(read).toMatchObject({ errorCode: 'payment_expired', activeAttempt: { status: 'EXPIRED' } });
    const event = await eventReaching(shop, payment.id, 'PAYMENT_EXPIRED', 'DELIVERED');
    const body = shop.receiver.bodies().find((candidate) => candidate.event_id === event.id)!;
    expect(body.content.object).toMatchObject({ payment_id: payment.id, status: 'expired' });
    errorOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card } }), 'INVALID_STATE');
  });

  it('refuses a confirm that comes after the expiry even before the sweep ran, and expires the payment', async () => {
    await stack.close();
    stack = await startStack({ worker: false, env: { DATABASE_URL: database.url } });
    shop = await shopWithReceiver(stack);
    const payment = await create();
    await runOut(payment.id);
    const late = errorOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card } }),
      'INVALID_STATE',
    );
    expect(late.extensions).toMatchObject({ status: 'EXPIRED' });
    expect(late.message).toMatch(/expired at .* without being confirmed/);
    expect(await statusOf(payment.id)).toBe('EXPIRED');
  });

  it('never expires a payment once it is confirmed', async () => {
    const payment = await create();
    const confirmed = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card } }),
    ).confirmPayment;
    expect(confirmed.status).toBe('SUCCEEDED');
    await runOut(payment.id);
    const worker = await startTestWorker({ ...stack.env, PAYMENT_EXPIRY_SWEEP_MS: '100' });
    await new Promise((resolve) => setTimeout(resolve, 400));
    await worker.close();
    expect(await statusOf(payment.id)).toBe('SUCCEEDED');
  });
});
