// Idempotency-Key under the faults that matter for money: a client that hangs up mid-request, a response
// that is an error, a key reused by another API key, a crashed request holding its key, and what the
// stored record reveals to a reader of the database.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import {
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreateApiKeyDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  PaymentDocument,
  RevokeApiKeyDocument,
  UpdateConnectorAccountDocument,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { diedBeforeAnswering } from '../support/idempotency.ts';
import { whileRowHeld } from '../support/row-lock.ts';
import { closedPort, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

let stack: Stack;
let sql: pg.Client;

beforeAll(async () => {
  // The processor answers after 400 ms, long enough for a client to give up while a confirm is in flight.
  stack = await startStack({ sandboxLatencyMs: 400 });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

/** A raw GraphQL POST, for what the typed client hides: response headers, aborts, odd bodies. */
function post(body: string, headers: Record<string, string>, signal?: AbortSignal) {
  return fetch(`${stack.api.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal });
}

/** Waits for `condition` (the server finishing work its client no longer waits for), up to 10 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (const started = Date.now(); !(await condition());) {
    if (Date.now() - started > 10_000) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const operation = (document: { toString(): string }, variables: unknown) => JSON.stringify({ query: document.toString(), variables });

describe('a request that began executing keeps its key', () => {
  it('a client that hangs up mid-confirm does not free its key: the retry gets the first answer, and the processor saw one payment', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD' } })).createPayment;
    const body = operation(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } });
    const headers = { 'api-key': shop.publishableKey, 'idempotency-key': `hangup-${created.id}` };
    const hangUp = new AbortController();
    const first = post(body, headers, hangUp.signal).catch((error: Error) => error);
    await new Promise((resolve) => setTimeout(resolve, 150)); // the confirm is now waiting on the processor
    hangUp.abort();
    expect(await first).toBeInstanceOf(Error);
    await until(
      async () =>
        (await sql.query('SELECT 1 FROM idempotency_records WHERE key = $1 AND status_code IS NOT NULL', [headers['idempotency-key']])).rowCount === 1,
    );
    const retry = await post(body, headers);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const answer = (await retry.json()) as { data: { confirmPayment: { status: string; activeAttempt: { id: string } } } };
    expect(answer.data.confirmPayment.status).toBe('SUCCEEDED');
    expect((await shop.sandboxPayment(`?reference=${answer.data.confirmPayment.activeAttempt.id}`)).body.status).toBe('succeeded');
    const { rows } = await sql.query(
      "SELECT count(*)::int AS n FROM payment_status_history WHERE payment_id = $1 AND subject = 'attempt' AND trigger = 'confirm'",
      [created.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it.each([
    ['a decline (PAYMENT_DECLINED)', '4000000000000002', 402],
    ['a processing error (PAYMENT_DECLINED, retryable)', '4000000000000119', 402],
  ])('%s is kept and replayed, not run again', async (_name, number, status) => {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD' } })).createPayment;
    const body = operation(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } });
    const headers = { 'api-key': shop.publishableKey, 'idempotency-key': `declined-${created.id}` };
    const first = await post(body, headers);
    expect(first.status).toBe(status);
    const firstBody = await first.text();
    const again = await post(body, headers);
    expect(again.status).toBe(status);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);
  });

  it('a processor that cannot be reached (CONNECTOR_ERROR) is kept and replayed', async () => {
    const isolated = await startStack({ env: { SANDBOX_URL: `http://127.0.0.1:${await closedPort()}` } });
    try {
      const shop = await merchantWithSandbox(isolated);
      const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD' } })).createPayment;
      const body = operation(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } });
      const headers = { 'api-key': shop.publishableKey, 'idempotency-key': `down-${created.id}` };
      const send = () => fetch(`${isolated.api.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      const first = await send();
      expect(first.status).toBe(502);
      const again = await send();
      expect(again.status).toBe(502);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await isolated.close();
    }
  });
});

describe('createPayment takes its key with its insert (docs/architecture.md, "Idempotency")', () => {
  type Created = { data?: { createPayment: { id: string } }; errors?: { extensions: { code: string } }[] };

  it('eight identical requests at once make one payment: the others get its answer or are told it is still running', async () => {
    const shop = await createMerchant(stack.api);
    const body = operation(CreatePaymentDocument, { input: { amount: 1800, currency: 'USD', description: 'race' } });
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `race-${shop.merchantId}` };
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body, headers)));
    const bodies = await Promise.all(answers.map(async (answer) => ({ status: answer.status, body: (await answer.json()) as Created })));
    const ids = new Set(bodies.filter((answer) => answer.status === 200).map((answer) => answer.body.data!.createPayment.id));
    expect(ids.size).toBe(1);
    for (const answer of bodies.filter((each) => each.status !== 200)) {
      expect(answer).toMatchObject({ status: 409, body: { errors: [{ extensions: { code: 'CONFLICT' } }] } });
    }
    const { rows } = await sql.query('SELECT id FROM payment_intents WHERE merchant_id = $1', [shop.merchantId]);
    expect(rows.map((row: { id: string }) => row.id)).toEqual([...ids]);
  });

  it('a retry gets the first answer even where the request would now be refused before its insert', async () => {
    const shop = await merchantWithSandbox(stack);
    const input = { amount: 1700, currency: 'USD', confirm: true, paymentMethodData: card('4242424242424242') };
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `refused-later-${shop.merchantId}` };
    const first = (await (await post(operation(CreatePaymentDocument, { input }), headers)).json()) as Created;
    expect(first.data?.createPayment.id).toMatch(/^pay_/);
    // The merchant's only account is disabled: the same request, new, is refused before anything is written.
    dataOf(await shop.secret(UpdateConnectorAccountDocument, { input: { id: shop.connectorAccountId, disabled: true } }));
    errorOf(await shop.secret(CreatePaymentDocument, { input }), 'INVALID_INPUT');

    const retry = await post(operation(CreatePaymentDocument, { input }), headers);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(((await retry.json()) as Created).data?.createPayment.id).toBe(first.data!.createPayment.id);
  });

  it('a key reused after 24 hours, taken over by a second run, is kept once the payment is written, even by an outage answered after the insert', async () => {
    const shop = await createMerchant(stack.api);
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `outage-${shop.merchantId}` };
    const create = (amount: number) =>
      post(operation(CreatePaymentDocument, { input: { amount, currency: 'USD', paymentMethodData: card('4242424242424242') } }), headers);
    expect((await create(2100)).status).toBe(200);
    await sql.query(`UPDATE idempotency_records SET created_at = now() - interval '25 hours' WHERE key = $1`, [headers['idempotency-key']]);
    // The payment's second statement (its payment method) meets an outage: the insert before it has written.
    await sql.query(
      `CREATE OR REPLACE FUNCTION refuse_attempt_update() RETURNS trigger AS $$ BEGIN IF NEW.amount = 2222 THEN RAISE EXCEPTION 'injected outage' USING ERRCODE = '53300'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await sql.query(`CREATE TRIGGER refuse_attempt_update BEFORE UPDATE ON payment_attempts FOR EACH ROW EXECUTE FUNCTION refuse_attempt_update()`);
    try {
      const outage = await create(2222);
      expect(((await outage.json()) as Created).errors?.[0]?.extensions.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await sql.query(`DROP TRIGGER refuse_attempt_update ON payment_attempts`);
      await sql.query(`DROP FUNCTION refuse_attempt_update()`);
    }
    const retry = await create(2222);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM payment_intents WHERE merchant_id = $1 AND amount = 2222`, [shop.merchantId]);
    expect(rows[0].n).toBe(1);
  });

  it('an answer that reads nothing stored is kept by the insert itself: one transaction writes both, and a retry replays it', async () => {
    const shop = await createMerchant(stack.api);
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `one-statement-${shop.merchantId}` };
    const body = operation(CreatePaymentDocument, { input: { amount: 2400, currency: 'USD' } });
    const answer = await (await post(body, headers)).text();
    const { id } = (JSON.parse(answer) as Created).data!.createPayment;
    // The transaction that wrote a row is its xmin: an answer stored after the insert would have written the record again.
    const { rows } = await sql.query(
      `SELECT record.xmin::text AS record, payment.xmin::text AS payment, record.response_body IS NOT NULL AS answered
       FROM idempotency_records AS record, payment_intents AS payment WHERE record.key = $1 AND payment.id = $2`,
      [headers['idempotency-key'], id],
    );
    expect(rows).toEqual([{ record: rows[0].payment, payment: expect.any(String), answered: true }]);
    const retry = await post(body, headers);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(answer);
  });

  it('an answer that reads what the insert writes is made after it: it lists the first attempt and both history rows', async () => {
    const shop = await createMerchant(stack.api);
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `reads-stored-${shop.merchantId}` };
    const query =
      'mutation ($input: CreatePaymentInput!) { createPayment(input: $input) { id activeAttempt { id } attempts { id } history { subject toStatus } } }';
    const body = JSON.stringify({ query, variables: { input: { amount: 2500, currency: 'USD' } } });
    const answer = await (await post(body, headers)).text();
    const payment = (JSON.parse(answer) as { data: { createPayment: { activeAttempt: { id: string }; attempts: unknown[]; history: unknown[] } } }).data
      .createPayment;
    expect(payment.attempts).toEqual([{ id: payment.activeAttempt.id }]);
    expect(payment.history).toEqual([
      { subject: 'intent', toStatus: 'REQUIRES_PAYMENT_METHOD' },
      { subject: 'attempt', toStatus: 'PAYMENT_METHOD_AWAITED' },
    ]);
    const retry = await post(body, headers);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(answer);
  });

  it('a held insert the database cannot take is SERVICE_UNAVAILABLE and leaves the key free: the retry makes the one payment', async () => {
    const shop = await createMerchant(stack.api);
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `unavailable-${shop.merchantId}` };
    const body = operation(CreatePaymentDocument, { input: { amount: 2626, currency: 'USD' } });
    await sql.query(
      `CREATE OR REPLACE FUNCTION refuse_intent_insert() RETURNS trigger AS $$ BEGIN IF NEW.amount = 2626 THEN RAISE EXCEPTION 'too many connections' USING ERRCODE = '53300'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await sql.query(`CREATE TRIGGER refuse_intent_insert BEFORE INSERT ON payment_intents FOR EACH ROW EXECUTE FUNCTION refuse_intent_insert()`);
    try {
      const refused = await post(body, headers);
      expect({ status: refused.status, body: await refused.json() }).toMatchObject({
        status: 503,
        body: { errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE' } }] },
      });
    } finally {
      await sql.query(`DROP TRIGGER refuse_intent_insert ON payment_intents`);
      await sql.query(`DROP FUNCTION refuse_intent_insert()`);
    }
    expect((await sql.query('SELECT 1 FROM idempotency_records WHERE key = $1', [headers['idempotency-key']])).rowCount).toBe(0);
    const retry = await post(body, headers);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(((await retry.json()) as Created).data?.createPayment.id).toMatch(/^pay_/);
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM payment_intents WHERE merchant_id = $1`, [shop.merchantId]);
    expect(rows[0].n).toBe(1);
  });

  it('a request refused before its insert leaves no record: the corrected retry runs', async () => {
    const shop = await createMerchant(stack.api);
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `corrected-${shop.merchantId}` };
    const refused = await post(operation(CreatePaymentDocument, { input: { amount: 1900, currency: 'USD', profileId: 'pro_none' } }), headers);
    expect(((await refused.json()) as Created).errors?.[0]?.extensions.code).toBe('INVALID_INPUT');
    expect((await sql.query('SELECT 1 FROM idempotency_records WHERE key = $1', [headers['idempotency-key']])).rowCount).toBe(0);
    const corrected = await post(operation(CreatePaymentDocument, { input: { amount: 1900, currency: 'USD' } }), headers);
    expect(((await corrected.json()) as Created).data?.createPayment.id).toMatch(/^pay_/);
  });
});

describe('a mutation that takes its key before it runs', () => {
  it('frees its key when refused before it wrote: the corrected request runs under the same key', async () => {
    const shop = await merchantWithSandbox(stack);
    const input = { amount: 3000, currency: 'USD', confirm: true, paymentMethodData: card('4242424242424242') };
    const paid = dataOf(await shop.secret(CreatePaymentDocument, { input })).createPayment;
    const refund = (amount: number) =>
      post(operation(CreateRefundDocument, { input: { paymentId: paid.id, amount } }), {
        'api-key': shop.secretKey,
        'idempotency-key': `refund-corrected-${paid.id}`,
      });
    // Refused inside the transaction that reserves the amount: it read and locked, and wrote nothing.
    const refused = (await (await refund(3001)).json()) as { errors?: { extensions: { code: string } }[] };
    expect(refused.errors?.[0]?.extensions.code).toBe('INVALID_INPUT');
    const corrected = (await (await refund(1000)).json()) as { data?: { createRefund: { amount: number } } };
    expect(corrected.data?.createRefund.amount).toBe(1000);
  });

  it('frees its key when its version guard refuses it (CONFLICT) before it wrote: the same key then captures', async () => {
    const shop = await merchantWithSandbox(stack);
    const input = { amount: 4000, currency: 'USD', captureMethod: 'MANUAL' as const, confirm: true, paymentMethodData: card('4242424242424242') };
    const authorized = dataOf(await shop.secret(CreatePaymentDocument, { input })).createPayment;
    expect(authorized.status).toBe('REQUIRES_CAPTURE');
    const capture = async () =>
      (await (
        await post(operation(CapturePaymentDocument, { input: { paymentId: authorized.id } }), {
          'api-key': shop.secretKey,
          'idempotency-key': `capture-conflict-${authorized.id}`,
        })
      ).json()) as { errors?: { extensions: { code: string } }[]; data?: { capturePayment: { status: string; amountReceived: number } } };
    // Another request's commit lands while the capture waits for the row: the capture's guarded statement matches no row.
    const refused = await whileRowHeld(sql, authorized.id, capture, async (holder) => {
      await holder.query('UPDATE payment_intents SET version = version + 1 WHERE id = $1', [authorized.id]);
    });
    expect(refused.errors?.[0]).toMatchObject({ message: expect.stringContaining('was changed by another request'), extensions: { code: 'CONFLICT' } });
    // Refused having written nothing: no record under the key, the payment as it was, nothing captured at the processor.
    const records = await sql.query('SELECT 1 FROM idempotency_records WHERE key = $1', [`capture-conflict-${authorized.id}`]);
    expect(records.rowCount).toBe(0);
    const read = async () => dataOf(await shop.secret(PaymentDocument, { id: authorized.id })).payment;
    expect((await read()).status).toBe('REQUIRES_CAPTURE');
    const capturedAtProcessor = async () =>
      (
        (await (
          await fetch(`${stack.sandboxUrl}/v1/payments/${authorized.activeAttempt.connectorTransactionId}`, {
            headers: { authorization: `Bearer ${shop.sandboxKey}` },
          })
        ).json()) as { amount_captured: number }
      ).amount_captured;
    expect(await capturedAtProcessor()).toBe(0);
    const captured = await capture();
    expect(captured.data?.capturePayment).toMatchObject({ status: 'SUCCEEDED', amountReceived: 4000 });
    expect(await capturedAtProcessor()).toBe(4000);
    // One capture: its attempt left AUTHORIZED once.
    const captures = (await read()).history.filter((row) => row.subject === 'attempt' && row.fromStatus === 'AUTHORIZED');
    expect(captures).toHaveLength(1);
  });

  it('keeps its answer once it has written, though the answer is an outage: a retry replays it, and there is one refund', async () => {
    const shop = await merchantWithSandbox(stack);
    const input = { amount: 5000, currency: 'USD', confirm: true, paymentMethodData: card('4242424242424242') };
    const paid = dataOf(await shop.secret(CreatePaymentDocument, { input })).createPayment;
    expect(paid.status).toBe('SUCCEEDED');
    const refund = () =>
      post(operation(CreateRefundDocument, { input: { paymentId: paid.id, amount: 1111 } }), {
        'api-key': shop.secretKey,
        'idempotency-key': `refund-outage-${paid.id}`,
      });
    // The refund's row is written and the processor refunds; saving its answer then meets an outage (SERVICE_UNAVAILABLE).
    let outage: { errors?: { extensions: { code: string } }[] };
    try {
      await sql.query(
        `CREATE OR REPLACE FUNCTION refuse_refund_update() RETURNS trigger AS $$ BEGIN IF NEW.amount = 1111 THEN RAISE EXCEPTION 'injected outage' USING ERRCODE = '53300'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
      );
      await sql.query(`CREATE TRIGGER refuse_refund_update BEFORE UPDATE ON refunds FOR EACH ROW EXECUTE FUNCTION refuse_refund_update()`);
      outage = (await (await refund()).json()) as typeof outage;
    } finally {
      await sql.query(`DROP TRIGGER IF EXISTS refuse_refund_update ON refunds`);
      await sql.query(`DROP FUNCTION IF EXISTS refuse_refund_update()`);
    }
    expect(outage.errors?.[0]?.extensions.code).toBe('SERVICE_UNAVAILABLE');
    const retry = await refund();
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(outage);
    const { rows } = await sql.query(`SELECT count(*)::int AS n FROM refunds WHERE payment_id = $1`, [paid.id]);
    expect(rows[0].n).toBe(1);
  });
});

describe('the key belongs to the API key that sent it', () => {
  it('two merchants using the same Idempotency-Key each get their own payment', async () => {
    const [first, second] = [await createMerchant(stack.api), await createMerchant(stack.api)];
    const headers = { 'idempotency-key': 'order-1' };
    const input = { amount: 1200, currency: 'USD' };
    const a = dataOf(await first.secret(CreatePaymentDocument, { input }, headers)).createPayment;
    const b = dataOf(await second.secret(CreatePaymentDocument, { input }, headers)).createPayment;
    expect(a.id).not.toBe(b.id);
    errorOf(await second.secret(PaymentDocument, { id: a.id }), 'NOT_FOUND');
  });

  it('a revoked key gets UNAUTHENTICATED, never the response its key stored', async () => {
    const shop = await createMerchant(stack.api);
    const { key, apiKey } = dataOf(await shop.secret(CreateApiKeyDocument, { input: { name: 'to revoke', type: 'SECRET' } })).createApiKey;
    const body = operation(CreatePaymentDocument, { input: { amount: 1300, currency: 'USD' } });
    const headers = { 'api-key': key, 'idempotency-key': 'before-revoke' };
    expect((await post(body, headers)).status).toBe(200);
    dataOf(await shop.secret(RevokeApiKeyDocument, { input: { keyId: apiKey.id } }));
    const replay = await post(body, headers);
    expect(replay.status).toBe(401);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('what the database holds', () => {
  it('a stored response with a one-time secret is sealed, and the request is an HMAC, not a plain hash', async () => {
    const shop = await createMerchant(stack.api);
    const body = operation(CreateApiKeyDocument, { input: { name: 'issued once', type: 'SECRET' } });
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': 'issue-key' };
    const issued = (await (await post(body, headers)).json()) as { data: { createApiKey: { key: string } } };
    const replay = await post(body, headers);
    // The caller that lost the answer can still recover the key it was issued; a database reader cannot.
    expect(((await replay.json()) as typeof issued).data.createApiKey.key).toBe(issued.data.createApiKey.key);
    const { rows } = await sql.query("SELECT request_hash, response_body FROM idempotency_records WHERE key = 'issue-key'");
    expect(rows).toHaveLength(1);
    expect(rows[0].response_body).toMatch(/^v1\./);
    expect(rows[0].response_body).not.toContain(issued.data.createApiKey.key);
    const parsed = JSON.parse(body) as { query: string; variables: unknown };
    const plainHash = createHash('sha256')
      .update(JSON.stringify([parsed.query, parsed.variables, null]))
      .digest('hex');
    expect(rows[0].request_hash).not.toBe(plainHash);
  });
});

describe('a request whose process died', () => {
  it('holds its key for the lease (CONFLICT), then every retry hears that its outcome is unknown, and nothing runs again', async () => {
    const shop = await createMerchant(stack.api);
    const body = operation(CreatePaymentDocument, { input: { amount: 1400, currency: 'USD', description: 'lease' } });
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `lease-${shop.merchantId}` };
    expect((await post(body, headers)).status).toBe(200);
    // As if the request had inserted its payment (the claim is written by the same statement) and its process had
    // died before storing the response.
    const crash = (minutesAgo: number) => diedBeforeAnswering(sql, headers['idempotency-key'], minutesAgo);
    await crash(4);
    const held = await post(body, headers);
    expect(held.status).toBe(409);
    await crash(6);
    // Retries at once: one answer is kept for the key, and each of them gives it.
    const retries = await Promise.all([post(body, headers), post(body, headers)]);
    const answers = await Promise.all(retries.map(async (retry) => ({ status: retry.status, body: await retry.text() })));
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(500);
    const refusal = JSON.parse(answers[0]!.body) as { errors: { message: string; extensions: { code: string } }[] };
    expect(refusal.errors[0]!.extensions.code).toBe('INTERNAL');
    expect(refusal.errors[0]!.message).toContain('whether it acted is unknown');
    const replay = await post(body, headers);
    expect(replay.status).toBe(500);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(answers[0]!.body);
    const { rows } = await sql.query('SELECT count(*)::int AS payments FROM payment_intents WHERE merchant_id = $1', [shop.merchantId]);
    expect(rows[0].payments).toBe(1);
  });
});

describe('a request that outlives its lease', () => {
  it('still gets its own answer, while the answer kept for its key meanwhile (outcome unknown) stays the key’s', async () => {
    const shop = await merchantWithSandbox(stack);
    const input = { amount: 1900, currency: 'USD', confirm: true, paymentMethodData: card('4242424242424242') };
    const body = operation(CreatePaymentDocument, { input });
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `outlived-${shop.merchantId}` };
    const original = post(body, headers); // the processor answers in 400 ms
    let claim: { scope: string; created_at: Date } | undefined;
    await until(async () => {
      claim = (await sql.query('SELECT scope, created_at FROM idempotency_records WHERE key = $1', [headers['idempotency-key']])).rows[0];
      return claim !== undefined;
    });
    // What the first retry after its lease keeps under its claim, while it still waits for the processor.
    const unknown = JSON.stringify({ errors: [{ message: 'outcome unknown', extensions: { code: 'INTERNAL' } }] });
    expect(await stack.api.services.idempotency.keep(claim!.scope, headers['idempotency-key'], claim!.created_at, 500, unknown)).toBe(true);
    const answered = await original;
    expect(answered.status).toBe(200);
    const { data } = (await answered.json()) as { data: { createPayment: { status: string } } };
    expect(data.createPayment.status).toBe('SUCCEEDED');
    const replay = await post(body, headers);
    expect(replay.status).toBe(500);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(unknown);
    const { rows } = await sql.query('SELECT count(*)::int AS payments FROM payment_intents WHERE merchant_id = $1', [shop.merchantId]);
    expect(rows[0].payments).toBe(1);
  });
});

describe('a key older than 24 hours', () => {
  it('no longer counts: another request with it runs afresh, while a 23-hour-old one still refuses it', async () => {
    const shop = await createMerchant(stack.api);
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `window-${shop.merchantId}` };
    const create = (amount: number) => post(operation(CreatePaymentDocument, { input: { amount, currency: 'USD' } }), headers);
    const first = (await (await create(1500)).json()) as { data: { createPayment: { id: string } } };
    const age = (hours: number) =>
      sql.query(`UPDATE idempotency_records SET created_at = now() - make_interval(hours => $1) WHERE key = $2`, [hours, headers['idempotency-key']]);

    await age(23);
    const refused = await create(1600);
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('IDEMPOTENCY_MISMATCH');

    await age(25);
    const afresh = await create(1600);
    expect(afresh.status).toBe(200);
    expect(afresh.headers.get('idempotent-replayed')).toBeNull();
    const second = ((await afresh.json()) as { data: { createPayment: { id: string; amount: number } } }).data.createPayment;
    expect(second.id).not.toBe(first.data.createPayment.id);
    expect(second.amount).toBe(1600);
    // The key now holds the new request: it replays that one, and refuses the first.
    const replay = await create(1600);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { data: { createPayment: { id: string } } }).data.createPayment.id).toBe(second.id);
    expect((await create(1500)).status).toBe(422);
  });
});

describe('requests a key cannot apply to', () => {
  it('refuses a key on a body that is not a JSON GraphQL request, naming Idempotency-Key', async () => {
    const shop = await createMerchant(stack.api);
    const response = await fetch(`${stack.api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/graphql', 'api-key': shop.secretKey, 'idempotency-key': 'not-json' },
      body: 'mutation { createPayment(input: { amount: 100, currency: "USD" }) { id } }',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { extensions: { code: string; field: string } }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'INVALID_INPUT', field: 'Idempotency-Key' });
    const { rows } = await sql.query('SELECT count(*)::int AS n FROM payment_intents WHERE merchant_id = $1', [shop.merchantId]);
    expect(rows[0].n).toBe(0);
  });

  it('ignores a key on a query', async () => {
    const shop = await createMerchant(stack.api);
    const response = await post(JSON.stringify({ query: '{ __typename }' }), { 'api-key': shop.secretKey, 'idempotency-key': 'a-query' });
    expect(response.status).toBe(200);
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM idempotency_records WHERE key = 'a-query'");
    expect(rows[0].n).toBe(0);
  });
});

describe('a key holds one mutation field', () => {
  /** A payment of 5000 that succeeded, and how much of it has been refunded so far. */
  async function paidPayment() {
    const shop = await merchantWithSandbox(stack);
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 5000, currency: 'USD' } })).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } }));
    const amountRefunded = async () =>
      (await sql.query('SELECT amount_refunded FROM payment_intents WHERE id = $1', [created.id])).rows[0].amount_refunded as number;
    return { shop, paymentId: created.id, amountRefunded };
  }

  it('refuses two refunds under one key before either runs, so a retry never refunds again (was 1000 more per send)', async () => {
    const { shop, paymentId, amountRefunded } = await paidPayment();
    const refund = (alias: string, amount: number) => `${alias}: createRefund(input: { paymentId: "${paymentId}", amount: ${amount} }) { id }`;
    const headers = { 'api-key': shop.secretKey, 'idempotency-key': `two-refunds-${paymentId}` };
    // The second refund is more than the payment: it alone is refused, and the first would run on every send.
    const documents = [
      `mutation { ${refund('a', 1000)} ${refund('b', 999_999)} }`,
      `mutation { ...Both } fragment Both on Mutation { ${refund('a', 1000)} ... on Mutation { ${refund('b', 999_999)} } }`,
    ];
    for (const query of documents) {
      for (let send = 0; send < 4; send += 1) {
        const response = await post(JSON.stringify({ query }), headers);
        expect(response.status).toBe(400);
        const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string; field: string } }[] };
        expect(body.data).toBeUndefined();
        expect(body.errors[0]!.extensions).toMatchObject({ code: 'INVALID_INPUT', field: 'Idempotency-Key' });
        expect(body.errors[0]!.message).toContain('one mutation field per keyed request');
      }
    }
    expect(await amountRefunded()).toBe(0);
    // One refund per key: four sends move the money once.
    for (let send = 0; send < 4; send += 1) expect((await post(JSON.stringify({ query: `mutation { ${refund('a', 1000)} }` }), headers)).status).toBe(200);
    expect(await amountRefunded()).toBe(1000);
  });
});

describe('a key needs an API key, checked before the request is read', () => {
  const records = async (key: string) => (await sql.query('SELECT count(*)::int AS n FROM idempotency_records WHERE key = $1', [key])).rows[0].n as number;
  // Past the token limit, and not even valid GraphQL: only a parse would notice either.
  const unparseable = JSON.stringify({ query: `mutation { syncPayment(input: { paymentId: "pay_000000000000000000000000" }) { ${'id '.repeat(6000)}` });

  it.each([
    ['no API key', {}],
    ['an unknown API key', { authorization: `Bearer sk_test_${'0'.repeat(32)}` }],
  ])('with %s: UNAUTHENTICATED, before the body is parsed, and no idempotency record is written', async (_name, credentials) => {
    const key = `anonymous-${Math.random()}`;
    const create = await post(operation(CreatePaymentDocument, { input: { amount: 100, currency: 'USD' } }), { ...credentials, 'idempotency-key': key });
    expect(create.status).toBe(401);
    expect(((await create.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('UNAUTHENTICATED');
    const tooLong = await post(unparseable, { ...credentials, 'idempotency-key': key });
    expect(tooLong.status).toBe(401);
    expect(await records(key)).toBe(0);
  });

  it('a keyed request past GRAPHQL_MAX_TOKENS is QUERY_TOO_COMPLEX: its parse stops at the limit (was parsed whole, to a syntax error)', async () => {
    const shop = await createMerchant(stack.api);
    const response = await post(unparseable, { 'api-key': shop.secretKey, 'idempotency-key': 'too-many-tokens' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(await records('too-many-tokens')).toBe(0);
  });

  it('a keyed request nested 2,000 deep is QUERY_TOO_COMPLEX (the parser overflowed the stack)', async () => {
    const shop = await createMerchant(stack.api);
    const query = `mutation { syncPayment(input: { paymentId: ${'['.repeat(2000)}${']'.repeat(2000)} }) { id } }`;
    const response = await post(JSON.stringify({ query }), { 'api-key': shop.secretKey, 'idempotency-key': 'nested-deep' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });
});
