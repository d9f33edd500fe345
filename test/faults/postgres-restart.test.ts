// Fault: PostgreSQL (a private, throwaway cluster: never the machine's shared server) crashes and comes back
// while payments are being made through a real API process, with a real worker delivering their events.
// What must hold: while it is down the API answers at once with a clear, retryable error (503
// SERVICE_UNAVAILABLE, never an internal error, never a hang), it recovers by itself (same process) once
// the database is back, and no payment is left half-written: each one's rows agree with each other and,
// after a sync, with the processor's own record; every event is still delivered.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { intentStatusOf, type AttemptStatus } from '../../src/modules/payments/machine/statuses.ts';
import { createScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { ConfirmPaymentDocument, CreatePaymentDocument, SyncPaymentDocument } from '../gql/graphql.ts';
import { auditDeliveries, settledEvents } from '../support/delivery-audit.ts';
import { dataOf, type GraphQLResult } from '../support/graphql-client.ts';
import { startOwnPostgres, type OwnPostgres } from '../support/postgres-server.ts';
import { startProcessStack, type ProcessStack } from '../support/process-stack.ts';
import { isAuthorizationBy } from '../support/processor-tap.ts';
import { shopWithReceiver, type Shop } from '../support/webhooks.ts';

const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };

let postgres: OwnPostgres;
let stack: ProcessStack;
let shop: Shop;
beforeAll(async () => {
  postgres = await startOwnPostgres();
  const database = await createScratchDatabase(postgres.url, 'payments_faults');
  // The product's wait for a pooled connection (not the tests' longer one): every answer's time bound below is production's.
  stack = await startProcessStack({ apis: 1, workers: 1, databaseUrl: database.url, tap: true, env: { DATABASE_TRANSACTION_MAX_WAIT_MS: '2000' } });
  shop = await shopWithReceiver(stack);
});
afterAll(async () => {
  await shop?.receiver.close();
  await stack?.close();
  await postgres?.remove();
});

type Phase = 'up' | 'down' | 'back';

interface Call {
  operation: 'createPayment' | 'confirmPayment';
  /** The database's state when the request was sent and when its answer came. */
  sent: Phase;
  answered: Phase;
  ms: number;
  /** Wall-clock times (ms), to set beside the server's log when a check fails. */
  sentAt: number;
  answeredAt: number;
  paymentId?: string;
  result?: GraphQLResult<unknown>;
  /** No HTTP answer at all (the connection failed). */
  failure?: string;
}

describe('a PostgreSQL crash and restart under load', () => {
  it('gets clear 503s while it is down, recovers by itself, and leaves no payment half-written', async () => {
    let phase: Phase = 'up';
    const calls: Call[] = [];
    const call = async <Data>(operation: Call['operation'], run: () => Promise<GraphQLResult<Data>>, paymentId?: string) => {
      const sent = phase;
      const started = performance.now();
      const record: Call = { operation, sent, answered: sent, ms: 0, sentAt: Date.now(), answeredAt: 0, paymentId };
      calls.push(record);
      try {
        record.result = await run();
      } catch (error) {
        record.failure = String(error);
      }
      record.answered = phase;
      record.answeredAt = Date.now();
      record.ms = performance.now() - started;
      return record.result as GraphQLResult<Data> | undefined;
    };

    // Load: four clients making payments (create, then confirm) without pause, whatever the answers.
    let loading = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (loading) {
          const created = await call('createPayment', () => shop.secret(CreatePaymentDocument, { input: { amount: 990, currency: 'USD' } }));
          const payment = created?.data?.createPayment;
          if (payment)
            await call(
              'confirmPayment',
              () => shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card } }),
              payment.id,
            );
          else await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }),
    );
    const confirmedIn = (wanted: Phase) => calls.filter((entry) => entry.operation === 'confirmPayment' && entry.sent === wanted && entry.result?.data).length;

    await expect.poll(() => confirmedIn('up'), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(10);
    // The crash comes while confirms are half-way: the processor has authorized them, and their answers
    // (held on the wire until the database is gone) must then be committed.
    stack.tap!.holdAnswers(isAuthorizationBy(shop.sandboxKey));
    const halfWay = await stack.tap!.waitForHeld(2);
    const stopAsked = Date.now();
    await postgres.stop('immediate'); // a crash: backends die mid-transaction
    phase = 'down';
    const stopped = Date.now();
    stack.tap!.releaseHeld();
    await expect
      .poll(() => calls.filter((entry) => entry.sent === 'down' && entry.result !== undefined).length, { timeout: 30_000, interval: 50 })
      .toBeGreaterThanOrEqual(20);
    const readyWhileDown = await fetch(`${stack.api.url}/ready`);
    expect(readyWhileDown.status).toBe(503);

    // 'back' from the moment the restart begins: pg_ctl start returns only after the server has been
    // accepting connections for a while, and a request answered in that window is rightly served.
    phase = 'back';
    const restartedAt = performance.now();
    await postgres.start();
    // Recovery by itself: the same API process serves payments again, with nobody restarting it.
    await expect.poll(() => confirmedIn('back'), { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(10);
    const recoveredInMs = performance.now() - restartedAt;
    loading = false;
    await load;
    expect((await fetch(`${stack.api.url}/ready`)).status).toBe(200);
    expect(stack.api.process.alive()).toBe(true);
    expect(stack.workers[0]!.alive()).toBe(true);

    // Every request got an HTTP answer, quickly; every refusal was the clear, retryable one.
    const errors = calls.flatMap((entry) => (entry.result?.errors ?? []).map((error) => ({ ...entry, error })));
    console.info(
      `postgres restart: ${calls.length} requests (${calls.filter((entry) => entry.sent === 'down').length} sent while down), ` +
        `${errors.length} refused, recovered ${Math.round(recoveredInMs)} ms after the restart, slowest answer ${Math.round(Math.max(...calls.map((entry) => entry.ms)))} ms`,
    );
    expect(calls.filter((entry) => entry.failure !== undefined).map((entry) => entry.failure)).toEqual([]);
    expect(Math.max(...calls.map((entry) => entry.ms))).toBeLessThan(15_000);
    expect(errors.length).toBeGreaterThan(0);
    for (const { error, result, operation } of errors) {
      expect({ operation, code: error.extensions?.code, status: result!.status }).toEqual({ operation, code: 'SERVICE_UNAVAILABLE', status: 503 });
      expect(error.message).toMatch(/retry later/);
    }
    // Requests sent while the database was down were all refused.
    const serverLog = async () =>
      `stop asked at ${stopAsked}, done at ${stopped}; the server's log:\n${(await readFile(postgres.logFile, 'utf8')).slice(-4_000)}`;
    const servedWhileDown = calls.filter((entry) => entry.sent === 'down' && entry.answered === 'down' && entry.result?.data);
    expect(servedWhileDown, servedWhileDown.length > 0 ? await serverLog() : undefined).toEqual([]);

    // No payment half-written. First, each payment's rows agree with each other.
    const sql = new pg.Client({ connectionString: stack.databaseUrl });
    await sql.connect();
    try {
      const { rows: payments } = await sql.query<{
        id: string;
        status: string;
        version: number;
        attempt_id: string | null;
        attempt_status: AttemptStatus | null;
        attempt_payment: string | null;
      }>(
        `SELECT p.id, p.status::text, p.version, a.id AS attempt_id, a.status::text AS attempt_status, a.payment_id AS attempt_payment
         FROM payment_intents p LEFT JOIN payment_attempts a ON a.id = p.active_attempt_id WHERE p.merchant_id = $1`,
        [shop.merchantId],
      );
      const created = new Set(
        calls
          .filter((entry) => entry.result?.data)
          .map((entry) => (entry.result!.data as { createPayment?: { id: string } }).createPayment?.id)
          .filter(Boolean),
      );
      expect(payments.length).toBeGreaterThanOrEqual(created.size);
      for (const payment of payments) {
        expect(payment.attempt_id, payment.id).not.toBeNull();
        expect(payment.attempt_payment, payment.id).toBe(payment.id);
        expect(payment.status, payment.id).toBe(intentStatusOf(payment.attempt_status!));
      }
      // The history ends where the rows are, for the intent and its active attempt.
      const { rows: mismatched } = await sql.query(
        `SELECT p.id, p.status::text AS intent, a.status::text AS attempt,
                (SELECT h.to_status FROM payment_status_history h WHERE h.payment_id = p.id AND h.subject = 'intent' ORDER BY h.id DESC LIMIT 1) AS intent_history,
                (SELECT h.to_status FROM payment_status_history h WHERE h.attempt_id = a.id AND h.subject = 'attempt' ORDER BY h.id DESC LIMIT 1) AS attempt_history
         FROM payment_intents p JOIN payment_attempts a ON a.id = p.active_attempt_id WHERE p.merchant_id = $1`,
        [shop.merchantId],
      );
      for (const row of mismatched) {
        expect(row.intent_history ?? row.intent, row.id).toBe(row.intent);
        expect(row.attempt_history, row.id).toBe(row.attempt);
      }
      // One event per committed change, never two.
      const { rows: repeated } = await sql.query(
        `SELECT object_id, object_version, event_type::text, count(*)::int AS n FROM events WHERE merchant_id = $1
         GROUP BY 1, 2, 3 HAVING count(*) > 1`,
        [shop.merchantId],
      );
      expect(repeated).toEqual([]);

      // Then, against the processor's own record: a confirm the API answered is what the database says; a
      // confirm refused half-way (the processor acted, the answer could not be committed) is pending and
      // syncable, and a sync brings it to the processor's truth. Never a charge the processor does not have,
      // never two authorizations for one attempt.
      for (const entry of calls.filter((candidate) => candidate.operation === 'confirmPayment' && candidate.result?.data)) {
        const answered = (entry.result!.data as { confirmPayment: { status: string } }).confirmPayment.status;
        expect(payments.find((payment) => payment.id === entry.paymentId)?.status, entry.paymentId).toBe(answered);
      }
      let synced = 0;
      for (const payment of payments) {
        const truth = await shop.sandboxPayment(`?reference=${payment.attempt_id}`);
        let status = payment.status;
        if (payment.status === 'PROCESSING') {
          status = dataOf(await shop.secret(SyncPaymentDocument, { input: { paymentId: payment.id } })).syncPayment.status;
          synced += 1;
        }
        if (truth.status === 404) expect(status, payment.id).not.toBe('SUCCEEDED');
        else expect({ id: payment.id, status }).toEqual({ id: payment.id, status: truth.body.status === 'succeeded' ? 'SUCCEEDED' : 'PROCESSING' });
        const authorizations = stack.tap!.authorizations(shop.sandboxKey).filter((exchange) => exchange.idempotencyKey === payment.attempt_id);
        expect(authorizations.length, payment.id).toBeLessThanOrEqual(1);
      }
      console.info(`postgres restart: ${payments.length} payments, ${synced} left pending by the crash and synced to the processor's state`);
      // The confirms caught half-way were among them.
      expect(synced).toBeGreaterThanOrEqual(halfWay.length);
    } finally {
      await sql.end();
    }

    // The worker recovered by itself too: every event, those of the syncs included, reaches the merchant.
    await settledEvents(stack.databaseUrl, [shop.profileId], 60_000);
    const audit = await auditDeliveries(stack.databaseUrl, [shop.profileId], shop.receiver);
    expect(audit.events.filter((event) => event.deliveryStatus !== 'DELIVERED')).toEqual([]);
    expect(audit.missing).toEqual([]);
    expect(audit.unknown).toEqual([]);
  });
});
