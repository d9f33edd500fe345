// PaymentStore.insert writes the payments created together with one statement (group commit,
// src/platform/batcher.ts): each payment's rows exactly as given, with its history in order and the
// Idempotency-Key claim it carries; a payment whose key another request holds is left out, and the rest are
// written. A batch that fails on one payment's rows is run again payment by payment, so that failure stays
// its own; one whose connection was lost mid-statement is every payment's, and none is run again (it may have
// committed). Each request's WriteWitness sees its own share.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/kernel/ids.ts';
import { createServiceContext } from '../../src/main/service-context.ts';
import { PaymentStore, type Payment } from '../../src/modules/payments/store.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { WriteWitness, witnessing } from '../../src/platform/db/write-witness.ts';
import { IdempotencyService, type IdempotencyClaim } from '../../src/platform/http/idempotency.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { CreatePaymentDocument } from '../gql/graphql.ts';
import { testEnv } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

const context = createServiceContext(loadConfig(testEnv()), createLogger('silent'));
const store = new PaymentStore(context.db, { eventsOf: () => [], published: () => {} });
const idempotency = new IdempotencyService(context);
let stack: Stack;
/** A payment as the service wrote it, with values a JSON round trip could change: the model of each new one. */
let model: Payment;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  const shop = await merchantWithSandbox(stack);
  const { id } = dataOf(
    await shop.secret(CreatePaymentDocument, {
      input: { amount: 990, currency: 'EUR', description: 'a mug “ü” \\ "quoted"', email: 'ada@example.com', metadata: { order: '42', nested: '[1, null]' } },
    }),
  ).createPayment;
  model = (await store.find(id))!;
});
afterAll(async () => {
  await context.db.$disconnect();
  await context.cache.close();
  await stack.close();
});

/** A new payment shaped as the model, with ids of its own and the values a driver could write apart from Prisma's. */
function newPayment(): Payment {
  const id = newId('payment');
  const attemptId = newId('attempt');
  const now = new Date();
  return {
    ...model,
    id,
    activeAttemptId: attemptId,
    connectors: ['a,b', 'q"x', 'c d'],
    splits: [{ amount: 100, merchantId: 'mer_1' }],
    expiresAt: new Date(now.getTime() + 60_000),
    createdAt: now,
    updatedAt: now,
    activeAttempt: { ...model.activeAttempt, id: attemptId, paymentId: id, processorSplit: { amount: 100 }, createdAt: now, updatedAt: now },
  };
}

/**
 * `count` new payments (as `shaped` makes each), each inserted by a request of its own (its witness, its claim on a key
 * of one new scope), in one turn.
 */
function insertTogether(count: number, shaped: (payment: Payment, index: number) => Payment = (payment) => payment) {
  const scope = newId('apiKey');
  const requests = Array.from({ length: count }, (_, index) => {
    const payment = shaped(newPayment(), index);
    const witness = new WriteWitness();
    const claim: IdempotencyClaim = idempotency.claim(scope, `key-${index}`, idempotency.requestHash(`request ${index}`));
    const inserted = witnessing(witness, () => store.insert(payment, 'key_test', claim));
    return { payment, witness, claim, inserted };
  });
  return { scope, requests };
}

const insertStatements = (run: { mock: { calls: unknown[][] } }) =>
  run.mock.calls.filter(([text]) => String(text).includes('INSERT INTO payment_intents')).length;

describe('PaymentStore.insert', () => {
  it('writes the payments created together with one statement: each as given, its history in order, its key claimed', async () => {
    const run = vi.spyOn(context.db.prepared, 'run');
    try {
      const { scope, requests } = insertTogether(5);
      await Promise.all(requests.map((request) => request.inserted));
      expect(insertStatements(run)).toBe(1);
      // A null of a JSON column is SQL's NULL, as Prisma writes it, not JSON's null (which find reads as null too).
      const { rows } = await context.db.prepared.run<{ n: number }>(
        'SELECT count(*)::int AS n FROM payment_intents i JOIN payment_attempts a ON a.payment_id = i.id WHERE i.id = ANY($1) AND i.routing IS NULL AND a.next_action IS NULL',
        [requests.map(({ payment }) => payment.id)],
      );
      expect(rows).toEqual([{ n: 5 }]);
      for (const { payment, witness, claim } of requests) {
        expect(await store.find(payment.id)).toStrictEqual(payment);
        const history = await context.db.paymentStatusHistory.findMany({ where: { paymentId: payment.id }, orderBy: { id: 'asc' } });
        expect(history.map((row) => [row.subject, row.attemptId, row.fromStatus, row.toStatus, row.trigger, row.actor, row.createdAt])).toEqual([
          ['intent', null, null, payment.status, 'create', 'key_test', payment.createdAt],
          ['attempt', payment.activeAttempt.id, null, payment.activeAttempt.status, 'create', 'key_test', payment.createdAt],
        ]);
        expect(claim.mayHold).toBe(true);
        expect(witness.wrote).toBe(true);
        expect(await idempotency.begin(scope, claim.key, claim.requestHash)).toEqual({ kind: 'in_progress' });
      }
    } finally {
      run.mockRestore();
    }
  });

  it('leaves out a payment whose key another request holds, or an earlier one of the batch: it writes nothing and is told so', async () => {
    const scope = newId('apiKey');
    // Another request holds key-0 already; the batch's first two payments carry it, its third and fourth key-1, its last none.
    expect(await idempotency.begin(scope, 'key-0', idempotency.requestHash('another request'))).toEqual({ kind: 'new' });
    const run = vi.spyOn(context.db.prepared, 'run');
    try {
      const requests = ['key-0', 'key-0', 'key-1', 'key-1', null].map((key, index) => {
        const payment = newPayment();
        const witness = new WriteWitness();
        const claim = key === null ? undefined : idempotency.claim(scope, key, idempotency.requestHash(`request ${index}`));
        return { payment, witness, claim, inserted: witnessing(witness, () => store.insert(payment, 'key_test', claim)) };
      });
      const settled = await Promise.allSettled(requests.map((request) => request.inserted));
      expect(settled.map((result) => (result.status === 'rejected' ? (result.reason as { code: string }).code : 'written'))).toEqual([
        'CONFLICT',
        'CONFLICT',
        'written',
        'CONFLICT',
        'written',
      ]);
      expect(insertStatements(run)).toBe(1);
      expect(requests.map(({ claim }) => claim?.lost ?? null)).toEqual([true, true, false, true, null]);
      expect(requests.map(({ witness }) => witness.wrote)).toEqual([false, false, true, false, true]);
      const found = await Promise.all(requests.map(({ payment }) => store.find(payment.id)));
      expect(found.map((payment) => payment !== null)).toEqual([false, false, true, false, true]);
      const history = await context.db.paymentStatusHistory.count({ where: { paymentId: { in: requests.map(({ payment }) => payment.id) } } });
      expect(history).toBe(4);
      expect(await idempotency.begin(scope, 'key-1', idempotency.requestHash('request 2'))).toEqual({ kind: 'in_progress' });
    } finally {
      run.mockRestore();
    }
  });

  it('runs each payment alone when the batch fails on one’s rows: that failure is its own, and no other request is told of its write', async () => {
    // A subscription's period is charged once (its unique key): the batch's first payment charges one already charged.
    const subscriptionPeriod = `${newId('subscription')}:1`;
    await store.insert({ ...newPayment(), subscriptionPeriod }, 'key_test');
    const run = vi.spyOn(context.db.prepared, 'run');
    try {
      const { requests } = insertTogether(3, (payment, index) => (index === 0 ? { ...payment, subscriptionPeriod } : payment));
      const settled = await Promise.allSettled(requests.map((request) => request.inserted));
      expect(settled.map((result) => (result.status === 'rejected' ? (result.reason as { constraint: string }).constraint : 'written'))).toEqual([
        'payment_intents_subscription_period_key',
        'written',
        'written',
      ]);
      expect(insertStatements(run)).toBe(4); // the batch, then each alone
      expect(requests.map(({ claim }) => claim.mayHold)).toEqual([false, true, true]);
      // The batch was sent from the first request's code: its witness saw none of the others' writes.
      expect(requests.map(({ witness }) => witness.wrote)).toEqual([false, true, true]);
    } finally {
      run.mockRestore();
    }
  });

  it('gives every payment the failure of a batch whose connection was lost mid-statement: none runs again, each may hold its key', async () => {
    const send = context.db.prepared.run.bind(context.db.prepared);
    const run = vi.spyOn(context.db.prepared, 'run');
    // The statement commits, and its answer is lost on the way back.
    run.mockImplementationOnce(async (...args) => {
      await send(...args);
      throw new Error('Connection terminated unexpectedly');
    });
    try {
      const { scope, requests } = insertTogether(3);
      // A fourth request claims the first's key meanwhile: it is not sent, so it has lost the key whatever the batch's fate.
      const witness = new WriteWitness();
      const claim = idempotency.claim(scope, 'key-0', idempotency.requestHash('request 0'));
      const again = witnessing(witness, () => store.insert(newPayment(), 'key_test', claim));
      const settled = await Promise.allSettled([...requests.map((request) => request.inserted), again]);
      expect(
        settled.map((result) => (result.status === 'rejected' ? ((result.reason as { code?: string }).code ?? (result.reason as Error).message) : 'written')),
      ).toEqual([...Array(3).fill('Connection terminated unexpectedly'), 'CONFLICT']);
      expect(insertStatements(run)).toBe(1);
      expect([...requests.map(({ claim }) => claim.uncertain), claim.uncertain, claim.lost]).toEqual([true, true, true, false, true]);
      expect([...requests.map(({ witness }) => witness.wrote), witness.wrote]).toEqual([true, true, true, false]);
    } finally {
      run.mockRestore();
    }
  });
});
