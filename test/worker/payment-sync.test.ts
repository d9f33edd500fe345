// Scheduled payment syncs through BullMQ: what the queue holds, and the worker bringing payments waiting on
// their processor to an end without anyone calling syncPayment (real Redis, PostgreSQL and sandbox).
import type { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject, vi } from 'vitest';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import type { PaymentSyncJob } from '../../src/modules/processor-sync/scheduler.ts';
import { PaymentSyncQueue } from '../../src/modules/processor-sync/jobs.ts';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument } from '../gql/graphql.ts';
import { testEnv } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { inspectPaymentSyncQueue, scheduleAndAwaitCompletion } from '../support/worker.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });
const logger = createLogger('silent');

let sql: pg.Client;
beforeAll(async () => {
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(() => sql.end());

async function confirmedPayment(stack: Stack, cardNumber: string) {
  const shop = await merchantWithSandbox(stack);
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD' } })).createPayment;
  const confirmed = dataOf(
    await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(cardNumber) } }),
  ).confirmPayment;
  const read = async () => dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment;
  return { confirmed, read };
}

describe('the payment sync queue', () => {
  // Its own prefix and the real schedule, so that no worker takes these jobs while the tests look at them.
  const config = loadConfig(testEnv({ REDIS_PREFIX: `${inject('redisPrefix')}_queue`, PAYMENT_SYNC_DELAY_SCALE: '1' }));
  let scheduler: PaymentSyncQueue;
  let queue: Queue<PaymentSyncJob>;
  beforeAll(() => {
    scheduler = new PaymentSyncQueue(config, logger);
    queue = inspectPaymentSyncQueue(config);
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    await scheduler.close();
  });

  it('holds a delayed job named by payment, attempt and step, due after that step’s delay', async () => {
    const job = { paymentId: 'pay_Queued1', attemptId: 'att_Queued1', step: 2 };
    await scheduler.schedule(job);
    const queued = await queue.getJob('pay_Queued1.att_Queued1.2');
    expect(queued?.data).toEqual(job);
    expect(queued?.opts.delay).toBe(60_000);
    expect(await queued?.getState()).toBe('delayed');
    // A step whose handler throws is tried again later.
    expect(queued?.opts.attempts).toBeGreaterThan(1);
    expect(queued?.opts.backoff).toBeDefined();
  });

  it('holds one job for a step scheduled twice, and another for the next step', async () => {
    const job = { paymentId: 'pay_Twice1', attemptId: 'att_Twice1', step: 0 };
    await scheduler.schedule(job);
    await scheduler.schedule(job);
    await scheduler.schedule({ ...job, step: 1 });
    const held = (await queue.getDelayed()).filter((queued) => queued.data.paymentId === job.paymentId);
    expect(held.map((queued) => [queued.id, queued.opts.delay]).sort()).toEqual([
      ['pay_Twice1.att_Twice1.0', 15_000],
      ['pay_Twice1.att_Twice1.1', 30_000],
    ]);
  });

  it('schedules nothing past the last step', async () => {
    await scheduler.schedule({ paymentId: 'pay_Past1', attemptId: 'att_Past1', step: 10 });
    expect(await queue.getJob('pay_Past1.att_Past1.10')).toBeUndefined();
  });

  it('scales the delay by PAYMENT_SYNC_DELAY_SCALE', async () => {
    const fast = new PaymentSyncQueue({ ...config, PAYMENT_SYNC_DELAY_SCALE: 0.001 }, logger);
    try {
      await fast.schedule({ paymentId: 'pay_Scaled1', attemptId: 'att_Scaled1', step: 9 });
      expect((await queue.getJob('pay_Scaled1.att_Scaled1.9'))?.opts.delay).toBe(21_600);
    } finally {
      await fast.close();
    }
  });
});

describe('the worker', () => {
  it('brings a payment left PROCESSING by a processor timeout to SUCCEEDED on its own', async () => {
    // The API gives up on the processor after 200 ms; the worker waits for its answers (1 s each).
    const slow = await startStack({ sandboxLatencyMs: 1000, env: { CONNECTOR_TIMEOUT_MS: '200' }, workerEnv: { CONNECTOR_TIMEOUT_MS: '10000' } });
    try {
      const { confirmed, read } = await confirmedPayment(slow, '4242424242424242');
      expect(confirmed.status).toBe('PROCESSING');
      const synced = await vi.waitFor(
        async () => {
          const payment = await read();
          expect(payment.status).toBe('SUCCEEDED');
          return payment;
        },
        { timeout: 20_000, interval: 100 },
      );
      expect(synced.activeAttempt.connectorTransactionId).toMatch(/^sbx_pay_/);
      expect(synced.history).toContainEqual(expect.objectContaining({ subject: 'intent', toStatus: 'SUCCEEDED', actor: 'scheduled_sync' }));
    } finally {
      await slow.close();
    }
  });

  it('flags a payment still waiting on its processor when the schedule runs out', async () => {
    // The whole schedule in about 3.5 s. A 3DS challenge nobody completes keeps the payment waiting.
    const fast = await startStack({ env: { PAYMENT_SYNC_DELAY_SCALE: '0.0001' } });
    try {
      const { confirmed, read } = await confirmedPayment(fast, '4000002500003155');
      expect(confirmed.status).toBe('REQUIRES_CUSTOMER_ACTION');
      const flagged = async () => (await sql.query('SELECT sync_exhausted_at FROM payment_intents WHERE id = $1', [confirmed.id])).rows[0].sync_exhausted_at;
      expect(await flagged()).toBeNull();
      await vi.waitFor(async () => expect(await flagged()).toBeInstanceOf(Date), { timeout: 20_000, interval: 100 });
      expect((await read()).status).toBe('REQUIRES_CUSTOMER_ACTION');
    } finally {
      await fast.close();
    }
  });

  it('completes a job whose payment does not exist', async () => {
    const stack = await startStack();
    try {
      const job = await scheduleAndAwaitCompletion(stack.api.context.config, { paymentId: 'pay_Missing1', attemptId: 'att_Missing1', step: 0 });
      expect(job.failedReason).toBeUndefined();
      expect(job.attemptsMade).toBe(1);
    } finally {
      await stack.close();
    }
  });
});
