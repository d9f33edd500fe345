// Fault: the API process is killed (SIGKILL) between the processor call and the commit of its answer.
// What must hold: the processor acted (its own state is the truth), the payment was left pending and
// syncable (the pending state committed before the call), and a sync through another API process brings it
// to the processor's true state, with one authorization at the processor and one event per change.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CapturePaymentDocument, ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument, SyncPaymentDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startProcessStack, type ProcessStack } from '../support/process-stack.ts';
import { isAuthorizationBy } from '../support/processor-tap.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

const CONNECTOR_TIMEOUT_MS = 6_000;

let stack: ProcessStack;
let shop: Shop;
beforeAll(async () => {
  // One API process that survives, a worker for the webhooks, and a tap between the APIs and the processor.
  // A connector timeout long enough for the doomed process's calls to be held until it is killed, short enough
  // that a sync may conclude on a decline soon after (twice the timeout: docs/payments.md, "Processor calls").
  stack = await startProcessStack({ apis: 1, workers: 1, tap: true, env: { CONNECTOR_TIMEOUT_MS: String(CONNECTOR_TIMEOUT_MS) } });
  shop = await shopWithReceiver(stack);
});
afterAll(async () => {
  await shop?.receiver.close();
  await stack?.close();
});

/** The three outcomes a processor can have decided when the API dies: charged, authorized for capture, declined. */
const CASES = [
  {
    name: 'charged',
    number: '4242424242424242',
    captureMethod: 'AUTOMATIC',
    processor: 'succeeded',
    status: 'SUCCEEDED',
    attempt: 'CHARGED',
    event: 'PAYMENT_SUCCEEDED',
  },
  {
    name: 'authorized',
    number: '4242424242424242',
    captureMethod: 'MANUAL',
    processor: 'requires_capture',
    status: 'REQUIRES_CAPTURE',
    attempt: 'AUTHORIZED',
    event: 'PAYMENT_AUTHORIZED',
  },
  {
    name: 'declined',
    number: '4000000000000002',
    captureMethod: 'AUTOMATIC',
    processor: 'failed',
    status: 'FAILED',
    attempt: 'AUTHORIZATION_FAILED',
    event: 'PAYMENT_FAILED',
  },
] as const;

describe('an API process killed between the processor call and the commit', () => {
  it('leaves each payment pending and syncable; a sync through another API process brings it to the processor’s truth', async () => {
    const payments = await Promise.all(
      CASES.map(async (example) => ({
        example,
        created: dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1500, currency: 'USD', captureMethod: example.captureMethod } }))
          .createPayment,
      })),
    );
    // A second API process, which dies once the processor has answered every authorization and before any
    // answer reaches it: the tap holds them back.
    const doomed = await stack.startApi();
    stack.tap!.holdAnswers(isAuthorizationBy(shop.sandboxKey));
    const client = doomed.as(shop.publishableKey);
    const confirms = payments.map(({ example, created }) =>
      client(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(example.number) } }).then(
        (result) => ({ answered: result }),
        (error: unknown) => ({ failed: error }),
      ),
    );
    const held = await stack.tap!.waitForHeld(CASES.length);
    expect(held.map((exchange) => exchange.status).sort()).toEqual([200, 200, 402]);
    expect(await doomed.process.kill()).toBeNull(); // killed by the signal, no exit code
    // The callers never got an answer: the connection died with the process.
    for (const outcome of await Promise.all(confirms)) expect(outcome).toHaveProperty('failed');
    stack.tap!.releaseHeld();

    for (const { example, created } of payments) {
      const read = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment!;
      // Half-way, and committed as such: the pending state, nothing of the processor's answer.
      expect(read, example.name).toMatchObject({ status: 'PROCESSING', activeAttempt: { status: 'PENDING', connectorTransactionId: null } });
      // The processor's own view (asked directly, not through the service): it acted.
      const truth = await shop.sandboxPayment(`?reference=${read.activeAttempt.id}`);
      expect(truth.body.status, example.name).toBe(example.processor);

      // The merchant syncs through the API process that is still up. A decline is left to the request that may
      // still retry it elsewhere until that request has certainly ended; a sync then concludes.
      const sync = async () => dataOf(await shop.secret(SyncPaymentDocument, { input: { paymentId: created.id } })).syncPayment;
      let synced = await sync();
      if (example.name === 'declined') {
        expect(synced, example.name).toMatchObject({ status: 'PROCESSING', activeAttempt: { status: 'PENDING' } });
        synced = await vi.waitFor(
          async () => {
            const settled = await sync();
            expect(settled.status).toBe('FAILED');
            return settled;
          },
          { timeout: 6 * CONNECTOR_TIMEOUT_MS, interval: 500 },
        );
      }
      expect(synced, example.name).toMatchObject({
        status: example.status,
        amountReceived: truth.body.amount_captured,
        activeAttempt: { status: example.attempt, connectorTransactionId: truth.body.id },
      });
      // Syncing again changes nothing.
      const again = dataOf(await shop.secret(SyncPaymentDocument, { input: { paymentId: created.id } })).syncPayment;
      expect(again.version).toBe(synced.version);

      // One authorization at the processor for the attempt, never a second one.
      const authorizations = stack.tap!.authorizations(shop.sandboxKey).filter((exchange) => exchange.idempotencyKey === read.activeAttempt.id);
      expect(authorizations, example.name).toHaveLength(1);
      // One event, delivered: the final one, from the sync (the pending state before the call emitted none).
      await eventReaching(shop, created.id, example.event, 'DELIVERED', 30_000);
      expect(
        (await eventsOf(shop, created.id)).map((event) => event.eventType),
        example.name,
      ).toEqual([example.event]);
    }
    expect(stack.tap!.authorizations(shop.sandboxKey)).toHaveLength(CASES.length);

    // The recovered authorization is an ordinary one: the merchant captures it.
    const authorized = payments.find(({ example }) => example.name === 'authorized')!;
    const captured = dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: authorized.created.id } })).capturePayment;
    expect(captured.status).toBe('SUCCEEDED');
  });
});
