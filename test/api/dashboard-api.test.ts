// What the dashboard reads: `activity` (the last hour's payments by status and webhook attempts) and the
// `paymentChanges` subscription (every payment of a profile as it changes, created ones included).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityDocument, ConfirmPaymentDocument, CreatePaymentDocument, PaymentChangesDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { liveChannel, subscribeWs, untilLive, wsClient } from '../support/subscriptions.ts';
import { card, declinedPayment, eventReaching, shopWithReceiver } from '../support/webhooks.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.close());

describe('activity', () => {
  it('counts the window’s payments by status (every status listed) and its delivery attempts', async () => {
    const shop = await shopWithReceiver(stack);
    const paid = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: paid.clientSecret, paymentMethodData: card() } }));
    await declinedPayment(shop);
    dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } }));
    await eventReaching(shop, paid.id, 'PAYMENT_SUCCEEDED', 'DELIVERED');
    shop.receiver.handler = (_request, reply) => reply.writeHead(500).end();
    const failing = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: failing.clientSecret, paymentMethodData: card() } }));
    await shop.receiver.waitForRequests(shop.receiver.received.length + 1);
    const failedAttempts = async () => {
      const { total, succeeded } = dataOf(await shop.secret(ActivityDocument, {})).activity.deliveryAttempts;
      return total - succeeded;
    };
    await expect.poll(failedAttempts, { timeout: 10_000 }).toBeGreaterThan(0);
    const { activity } = dataOf(await shop.secret(ActivityDocument, {}));
    const counts = Object.fromEntries(activity.paymentsByStatus.map((entry) => [entry.status, entry.count]));
    expect(Object.keys(counts)).toHaveLength(12);
    expect(counts).toMatchObject({ SUCCEEDED: 2, REQUIRES_PAYMENT_METHOD: 1, CANCELLED: 0 });
    expect(counts['FAILED']! + counts['REQUIRES_PAYMENT_METHOD']!).toBe(2); // a declined payment may be tried again
    const { total, succeeded } = activity.deliveryAttempts;
    // The receiver answered 204, then 500: both kinds are counted.
    expect(succeeded).toBeGreaterThan(0);
    expect(total).toBeGreaterThan(succeeded);
    expect(Date.now() - new Date(activity.since).getTime()).toBeGreaterThanOrEqual(3_600_000);
    // Nothing of another merchant, nothing before `since`.
    const other = await merchantWithSandbox(stack);
    expect(dataOf(await other.secret(ActivityDocument, {})).activity.paymentsByStatus.every((entry) => entry.count === 0)).toBe(true);
    const later = dataOf(await shop.secret(ActivityDocument, { since: new Date(Date.now() + 60_000).toISOString() })).activity;
    expect(later.paymentsByStatus.every((entry) => entry.count === 0) && later.deliveryAttempts.total === 0).toBe(true);
  });

  it('names `since` when the window is longer than 30 days, and needs a secret key', async () => {
    const shop = await merchantWithSandbox(stack);
    const tooOld = errorOf(await shop.secret(ActivityDocument, { since: new Date(Date.now() - 31 * 86_400_000).toISOString() }), 'INVALID_INPUT');
    expect(tooOld.extensions?.['field']).toBe('since');
    errorOf(await shop.publishable(ActivityDocument, {}), 'FORBIDDEN');
  });
});

describe('paymentChanges', () => {
  it('streams each payment of the profile as it is created and as it changes, and nothing of others', async () => {
    const shop = await merchantWithSandbox(stack);
    const other = await merchantWithSandbox(stack);
    const client = wsClient(stack.api.url, shop.secretKey);
    const changes = subscribeWs(client, PaymentChangesDocument, { profileId: shop.profileId });
    await untilLive(stack.env, liveChannel.profilePayments(shop.profileId));
    dataOf(await other.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'USD' } }));
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'USD' } })).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    await expect.poll(() => changes.results.at(-1)?.paymentChanges.status, { timeout: 10_000 }).toBe('SUCCEEDED');
    const seen = changes.results.map(({ paymentChanges }) => paymentChanges);
    expect(seen.every((payment) => payment.id === created.id && payment.profileId === shop.profileId)).toBe(true);
    expect(seen[0]).toMatchObject({ status: 'REQUIRES_PAYMENT_METHOD', version: 0 });
    expect(seen.map((payment) => payment.version)).toEqual([...seen.map((payment) => payment.version)].sort((a, b) => a - b));
    changes.close();
    await client.dispose();
  });

  it('refuses another merchant’s profile and a publishable key', async () => {
    const shop = await merchantWithSandbox(stack);
    const other = await merchantWithSandbox(stack);
    const client = wsClient(stack.api.url, shop.secretKey);
    const foreign = subscribeWs(client, PaymentChangesDocument, { profileId: other.profileId });
    expect((await foreign.waitForError())[0]?.extensions?.['code']).toBe('NOT_FOUND');
    const publishableClient = wsClient(stack.api.url, shop.publishableKey);
    const publishable = subscribeWs(publishableClient, PaymentChangesDocument, { profileId: shop.profileId });
    expect((await publishable.waitForError())[0]?.extensions?.['code']).toBe('FORBIDDEN');
    await client.dispose();
    await publishableClient.dispose();
  });
});
