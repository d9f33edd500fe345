// PaymentStore.find reads a payment and its active attempt with one statement through node-postgres (one moment of
// the database, and no Prisma client runtime): it must answer exactly what Prisma reads of the two rows, every
// field with its type and its nulls, for payments in each shape, or what is built on it would differ.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PaymentStore } from '../../src/modules/payments/store.ts';
import { createDatabase, type Database } from '../../src/platform/db/client.ts';
import { CreatePaymentDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { declinedPayment, paidPayment, settlingPayment } from '../support/webhooks.ts';

let stack: Stack;
let db: Database;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  db = createDatabase(inject('databaseUrl'), 2);
});
afterAll(async () => {
  await db.$disconnect();
  await stack.close();
});

describe('PaymentStore.find', () => {
  it('answers what Prisma reads of the payment and its active attempt, for payments in each shape; null for none', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(
      await shop.secret(CreatePaymentDocument, {
        input: { amount: 990, currency: 'EUR', description: 'a mug', email: 'ada@example.com', metadata: { order: '42', gift: 'yes' } },
      }),
    ).createPayment;
    const paid = (await paidPayment(shop)).id;
    // The values a driver could read apart from Prisma's: a JSON null, list items with commas, quotes and spaces, a
    // set timestamp, JSON objects and arrays.
    await db.$executeRaw`UPDATE payment_intents SET metadata = 'null'::jsonb, connectors = ARRAY['a,b', 'q"x', 'c d'], sync_exhausted_at = now(),
      splits = '[{"amount": 100, "merchantId": "mer_1"}]'::jsonb WHERE id = ${paid}`;
    await db.$executeRaw`UPDATE payment_attempts SET processor_split = '{"amount": 100}'::jsonb WHERE payment_id = ${paid}`;
    const ids = [created.id, paid, await declinedPayment(shop), (await settlingPayment(shop)).id];
    const store = new PaymentStore(db, { eventsOf: () => [], published: () => {} });
    for (const id of ids) {
      const intent = await db.paymentIntent.findUniqueOrThrow({ where: { id } });
      const activeAttempt = await db.paymentAttempt.findUniqueOrThrow({ where: { id: intent.activeAttemptId! } });
      expect(await store.find(id), id).toStrictEqual({ ...intent, activeAttempt });
    }
    expect(await store.find('pay_000000000000000000000000')).toBeNull();
  });
});
