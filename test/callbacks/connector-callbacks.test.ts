// Processors' callbacks over HTTP: registration at the sandbox, the sandbox's own signed callbacks moving
// payments, and callbacks crafted as a processor (or an attacker) would send them.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { CONNECTORS } from '../../src/modules/connectors/registry.ts';
import { UNVERIFIED_SAMPLE_PER_MINUTE } from '../../src/modules/connectors/callbacks.ts';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument } from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { prng } from '../support/prng.ts';
import { answer, startReceiver, type Receiver } from '../support/receiver.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { eventsOf, shopWithReceiver } from '../support/webhooks.ts';
import { sandboxSignature } from '../support/sandbox-signature.ts';

let stack: Stack;
let sql: pg.Client;
let outgoing: Receiver;
beforeAll(async () => {
  // The worker's first scheduled sync comes after 15 s: whatever moves a payment sooner is the callback.
  stack = await startStack({ sandboxBankDebitSettleMs: 200, env: { PAYMENT_SYNC_DELAY_SCALE: '1' } });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
  outgoing = await startReceiver(answer(200));
});
afterAll(async () => {
  await outgoing.close();
  await sql.end();
  await stack.close();
});

const register = (merchantId: string, connectorAccountId: string, key?: string) =>
  fetch(`${stack.api.url}/account/${merchantId}/webhooks/${connectorAccountId}`, { method: 'POST', headers: key ? { 'api-key': key } : {} });

const postCallback = (merchantId: string, connectorAccountId: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(`${stack.api.url}/webhooks/${merchantId}/${connectorAccountId}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers: { 'content-type': 'application/json', ...headers },
  });

const debit = { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } };

/** A merchant with an outgoing webhook endpoint and a bank debit left PROCESSING at the sandbox. */
async function processingDebit(shop: Awaited<ReturnType<typeof merchantWithSandbox>>) {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4200, currency: 'EUR' } })).createPayment;
  const confirmed = dataOf(
    await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: debit } }),
  ).confirmPayment;
  expect(confirmed.status).toBe('PROCESSING');
  return confirmed;
}

const readPayment = async (shop: { secret: Awaited<ReturnType<typeof merchantWithSandbox>>['secret'] }, id: string) =>
  dataOf(await shop.secret(PaymentDocument, { id })).payment!;

const storedCallbacks = async (connectorAccountId: string) =>
  (
    await sql.query<{ verification: string; outcome: string; payment_id: string | null; headers: Record<string, string> }>(
      'SELECT verification, outcome, payment_id, headers FROM connector_callbacks WHERE connector_account_id = $1 ORDER BY received_at',
      [connectorAccountId],
    )
  ).rows;

describe('registering the callback URL at the processor', () => {
  it('points the sandbox’s callbacks at this service and records it on the account', async () => {
    const shop = await merchantWithSandbox(stack);
    const response = await register(shop.merchantId, shop.connectorAccountId, shop.secretKey);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, string>;
    expect(body).toMatchObject({
      merchant_connector_id: shop.connectorAccountId,
      connector_name: 'sandbox',
      webhook_url: `${stack.api.url}/webhooks/${shop.merchantId}/${shop.connectorAccountId}`,
      connector_webhook_id: expect.stringMatching(/^we_/),
    });
    const atSandbox = await fetch(`${stack.sandboxUrl}/v1/webhook_endpoints`, { headers: { authorization: `Bearer ${shop.sandboxKey}` } });
    expect(((await atSandbox.json()) as { data: { url: string }[] }).data.map((endpoint) => endpoint.url)).toEqual([body.webhook_url]);
  });

  it('refuses a missing account (404), another merchant’s path (403), no key (401), a publishable key (403), and fauxpay (501)', async () => {
    const shop = await merchantWithSandbox(stack);
    expect((await register(shop.merchantId, 'mca_DoesNotExist0000000000000', shop.secretKey)).status).toBe(404);
    const other = await merchantWithSandbox(stack);
    expect((await register(shop.merchantId, other.connectorAccountId, shop.secretKey)).status).toBe(404);
    expect((await register(other.merchantId, other.connectorAccountId, shop.secretKey)).status).toBe(403);
    expect((await register(shop.merchantId, shop.connectorAccountId)).status).toBe(401);
    expect((await register(shop.merchantId, shop.connectorAccountId, shop.publishableKey)).status).toBe(403);
    const { account } = await addConnectorAccount(stack, shop, 'fauxpay');
    const refused = await register(shop.merchantId, account.id, shop.secretKey);
    expect(refused.status).toBe(501);
    expect(await refused.json()).toMatchObject({ error: { code: 'WEBHOOKS_NOT_SUPPORTED' } });
  });
});

describe('the sandbox’s own callbacks', () => {
  it('concurrent registrations leave one secret, the one the sandbox signs with', async () => {
    const shop = await merchantWithSandbox(stack);
    const answers = await Promise.all(Array.from({ length: 5 }, () => register(shop.merchantId, shop.connectorAccountId, shop.secretKey)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const payment = await processingDebit(shop);
    await vi.waitFor(async () => expect((await readPayment(shop, payment.id)).status).toBe('SUCCEEDED'), { timeout: 10_000, interval: 50 });
    expect((await storedCallbacks(shop.connectorAccountId)).map((row) => row.outcome)).toEqual(['applied']);
  });

  it('move a processing bank debit to succeeded, and one outgoing webhook follows', async () => {
    // The sandbox declares no webhook flow categories; callbacks work all the same (the list is informational).
    expect(CONNECTORS.sandbox.webhookFlowCategories).toEqual([]);
    const shop = await shopWithReceiver(stack, outgoing);
    expect((await register(shop.merchantId, shop.connectorAccountId, shop.secretKey)).status).toBe(200);
    const payment = await processingDebit(shop);
    // No sync runs for 15 s and nobody reads the sandbox: only its callback can move the payment.
    const settled = await vi.waitFor(
      async () => {
        const read = await readPayment(shop, payment.id);
        expect(read.status).toBe('SUCCEEDED');
        return read;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(settled.amountReceived).toBe(4200);
    const stored = await storedCallbacks(shop.connectorAccountId);
    expect(stored.map((row) => [row.verification, row.outcome, row.payment_id])).toContainEqual(['VERIFIED', 'applied', payment.id]);
    await vi.waitFor(async () => {
      const events = await eventsOf(shop, payment.id);
      expect(events.map((event) => [event.eventType, event.deliveryStatus])).toEqual([
        ['PAYMENT_SUCCEEDED', 'DELIVERED'],
        ['PAYMENT_PROCESSING', 'DELIVERED'],
      ]);
    });
    expect(outgoing.bodies().filter((body) => body.content.object.payment_id === payment.id && body.event_type === 'payment_succeeded')).toHaveLength(1);
  });
});

describe('the route itself', () => {
  it('survives a forged Host header that is not a valid URL authority', async () => {
    const { connect } = await import('node:net');
    const { port } = new URL(stack.api.url);
    const answerOf = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.end('POST /webhooks/mer_x/mca_y HTTP/1.1\r\nHost: [\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'),
      );
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answerOf).toMatch(/^HTTP\/1\.1 (400|404)/);
    expect((await fetch(`${stack.api.url}/health`)).status).toBe(200);
  });
});

describe('callbacks as a processor or an attacker sends them', () => {
  const secret = `whsec_${randomBytes(18).toString('hex')}`;
  let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
  beforeAll(async () => {
    shop = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
  });

  /** Waits until the sandbox has settled the debit (its own timer, sandboxBankDebitSettleMs after the payment). */
  const settledAtSandbox = (transactionId: string) =>
    vi.waitFor(async () => expect((await shop.sandboxPayment(`/${transactionId}`)).body.status).toBe('succeeded'), { timeout: 10_000, interval: 20 });

  /** The callback the sandbox would send about `paymentId`'s transaction, with the sandbox's current view of it. */
  async function callbackAbout(transactionId: string, overrides: Record<string, unknown> = {}) {
    const atSandbox = await shop.sandboxPayment(`/${transactionId}`);
    const object = { ...atSandbox.body, ...overrides };
    return JSON.stringify({
      id: `evt_sbx_${randomBytes(6).toString('hex')}`,
      type: `payment.${object.status}`,
      created: Math.floor(Date.now() / 1000),
      data: { object },
    });
  }

  it('a valid one applies once: a replay changes nothing, and a late "processing" after "succeeded" is ignored', async () => {
    const payment = await processingDebit(shop);
    const transactionId = payment.activeAttempt!.connectorTransactionId!;
    await settledAtSandbox(transactionId);
    const body = await callbackAbout(transactionId);
    const first = await postCallback(shop.merchantId, shop.connectorAccountId, body, { 'sandbox-signature': sandboxSignature(body, secret) });
    expect([first.status, await first.json()]).toEqual([200, { received: true, outcome: 'applied' }]);
    const afterFirst = await readPayment(shop, payment.id);
    expect(afterFirst.status).toBe('SUCCEEDED');
    expect(afterFirst.history.at(-1)).toMatchObject({ actor: 'callback' });

    const replay = await postCallback(shop.merchantId, shop.connectorAccountId, body, { 'sandbox-signature': sandboxSignature(body, secret) });
    expect(await replay.json()).toEqual({ received: true, outcome: 'duplicate_or_stale' });
    const late = await callbackAbout(transactionId, { status: 'processing', amount_captured: 0 });
    const lateAnswer = await postCallback(shop.merchantId, shop.connectorAccountId, late, { 'sandbox-signature': sandboxSignature(late, secret) });
    expect(await lateAnswer.json()).toEqual({ received: true, outcome: 'duplicate_or_stale' });
    const afterAll = await readPayment(shop, payment.id);
    expect([afterAll.status, afterAll.version]).toEqual(['SUCCEEDED', afterFirst.version]);
    expect((await eventsOf(shop, payment.id)).map((event) => event.eventType)).toEqual(['PAYMENT_SUCCEEDED', 'PAYMENT_PROCESSING']);
  });

  it('a bad, stale or missing signature gets 401 and changes nothing; the attempt is stored without credentials', async () => {
    const payment = await processingDebit(shop);
    const transactionId = payment.activeAttempt!.connectorTransactionId!;
    await settledAtSandbox(transactionId);
    const body = await callbackAbout(transactionId);
    const attempts: Record<string, string>[] = [
      { 'sandbox-signature': sandboxSignature(body, 'not the secret at all') },
      { 'sandbox-signature': sandboxSignature(body, secret, Math.floor(Date.now() / 1000) - 3600) }, // a replay from an hour ago
      { 'sandbox-signature': sandboxSignature(body.replace('"amount":4200', '"amount":1'), secret) },
      {},
      { 'sandbox-signature': 'garbage', authorization: 'Bearer sk_should_not_be_stored' },
    ];
    for (const headers of attempts) {
      const refused = await postCallback(shop.merchantId, shop.connectorAccountId, body, headers);
      expect(refused.status).toBe(401);
    }
    const read = await readPayment(shop, payment.id);
    expect([read.status, read.version]).toEqual(['PROCESSING', payment.version]);
    const stored = (await storedCallbacks(shop.connectorAccountId)).filter((row) => row.outcome === 'signature_mismatch');
    expect(stored.length).toBeGreaterThanOrEqual(attempts.length);
    for (const row of stored) expect(row.headers.authorization).toBeUndefined();
  });

  it('forged ones are kept only as a sample, at most UNVERIFIED_SAMPLE_PER_MINUTE a minute, without body or most headers', async () => {
    const target = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
    const body = JSON.stringify({ id: 'evt_forged', type: 'payment.succeeded', data: { object: { padding: 'x'.repeat(19_000) } } });
    const headers = {
      'sandbox-signature': sandboxSignature(body, 'a guessed secret'),
      'x-padding': 'y'.repeat(8_000),
      'user-agent': `forger/${'z'.repeat(500)}`,
    };
    const started = Date.now();
    // 10 at a time, so several API requests race for the sample's last places.
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch += 1) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => postCallback(target.merchantId, target.connectorAccountId, body, headers)));
      statuses.push(...answers.map((answer) => answer.status));
    }
    expect(statuses).toEqual(Array(200).fill(401));
    const minutes = Math.ceil((Date.now() - started) / 60_000);
    const { rows } = await sql.query<{ verification: string; outcome: string; headers: Record<string, string>; body_bytes: number }>(
      'SELECT verification, outcome, headers, octet_length(body) AS body_bytes FROM connector_callbacks WHERE connector_account_id = $1',
      [target.connectorAccountId],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThanOrEqual(UNVERIFIED_SAMPLE_PER_MINUTE * minutes);
    for (const row of rows) {
      expect(row).toMatchObject({ verification: 'FAILED', outcome: 'signature_mismatch', body_bytes: 0 });
      expect(row.headers).toEqual({
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': `forger/${'z'.repeat(193)}`,
      });
    }
  });

  it('forged ones never wait for the sample’s lock: while another holds it, a burst of 50 is answered 401 and none is kept', async () => {
    const target = await merchantWithSandbox(stack, 'sandbox', { webhookSecret: secret });
    const body = JSON.stringify({ id: 'evt_forged', type: 'payment.succeeded', data: { object: {} } });
    const forged = () => postCallback(target.merchantId, target.connectorAccountId, body, { 'sandbox-signature': sandboxSignature(body, 'a guessed secret') });
    const storedCount = async () =>
      (await sql.query('SELECT count(*)::int AS n FROM connector_callbacks WHERE connector_account_id = $1', [target.connectorAccountId])).rows[0].n as number;
    // Another API process is storing one of the account's forged callbacks: it holds the sample's lock.
    const holder = new pg.Client({ connectionString: inject('databaseUrl') });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT pg_advisory_xact_lock(hashtext('connector_callbacks:' || $1))", [target.connectorAccountId]);
      // Were they to wait for it, these would hold every pooled connection and not be answered until it is released.
      const answers = await Promise.all(Array.from({ length: 50 }, forged));
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(401));
      expect(await storedCount()).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await forged()).status).toBe(401);
    expect(await storedCount()).toBe(1);
  });

  it('an old callback never takes the recovery rows a stalled sync may take', async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
    const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };
    const authorized = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card } }),
    ).confirmPayment;
    expect(authorized.status).toBe('REQUIRES_CAPTURE');
    // The authorized snapshot, as a processor's retry could still deliver it after a capture began.
    const old = await callbackAbout(authorized.activeAttempt!.connectorTransactionId!);
    // A capture request in flight for a minute (stalled): only a sync may give the authorization back.
    await sql.query(`UPDATE payment_attempts SET status = 'CAPTURE_INITIATED', updated_at = now() - interval '1 minute' WHERE id = $1`, [
      authorized.activeAttempt!.id,
    ]);
    await sql.query(`UPDATE payment_intents SET status = 'PROCESSING', version = version + 1 WHERE id = $1`, [created.id]);
    const response = await postCallback(shop.merchantId, shop.connectorAccountId, old, { 'sandbox-signature': sandboxSignature(old, secret) });
    expect(await response.json()).toEqual({ received: true, outcome: 'duplicate_or_stale' });
    const read = await readPayment(shop, created.id);
    expect([read.status, read.activeAttempt!.status]).toEqual(['PROCESSING', 'CAPTURE_INITIATED']);
  });

  it('a verified callback about a payment this account does not have is acknowledged and logged', async () => {
    const body = JSON.stringify({
      id: 'evt_sbx_unknown',
      type: 'payment.succeeded',
      created: 1,
      data: { object: { id: 'py_NotOurs', status: 'succeeded', amount: 5, amount_capturable: 0, amount_captured: 5, next_action: null, error: null } },
    });
    const response = await postCallback(shop.merchantId, shop.connectorAccountId, body, { 'sandbox-signature': sandboxSignature(body, secret) });
    expect([response.status, await response.json()]).toEqual([200, { received: true, outcome: 'payment_not_found' }]);
  });

  it('an unknown merchant or account is 404; a connector without webhooks is 501', async () => {
    expect((await postCallback('mer_Unknown00000000000000000', shop.connectorAccountId, '{}')).status).toBe(404);
    expect((await postCallback(shop.merchantId, 'mca_Unknown00000000000000000', '{}')).status).toBe(404);
    expect((await postCallback('../../etc', 'passwd', '{}')).status).toBe(404);
    const { account } = await addConnectorAccount(stack, shop, 'fauxpay');
    const response = await postCallback(shop.merchantId, account.id, '{}');
    expect([response.status, await response.json()]).toEqual([
      501,
      {
        error: {
          code: 'WEBHOOKS_NOT_SUPPORTED',
          message: expect.stringContaining('sync'),
          requestId: response.headers.get('x-request-id'),
          docs: 'docs/api.md#error-webhooks-not-supported',
        },
      },
    ]);
  });

  it('fuzzed bodies and headers never get a 5xx or move a payment, even when validly signed', async () => {
    const payment = await processingDebit(shop);
    const transactionId = payment.activeAttempt!.connectorTransactionId!;
    const valid = await callbackAbout(transactionId, { status: 'processing' });
    const random = prng(11);
    const bytes = (length: number) => Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
    const bodies: (string | Buffer)[] = [
      bytes(0),
      bytes(64),
      bytes(5000),
      valid.slice(0, Math.floor(valid.length / 2)),
      valid.replace(/"amount":\d+/, '"amount":"lots"'),
      valid.replace(/"status":"processing"/, '"status":{"$gt":""}'),
      JSON.stringify({ id: 'x'.repeat(100_000), type: 'payment.succeeded', data: { object: {} } }),
      JSON.stringify([1, 2, 3]),
      'null',
      JSON.stringify({ id: 'evt', type: 'refund.succeeded', data: { object: JSON.parse(valid).data.object } }),
      `${valid}\u0000`,
      valid.replace(/"id":"[^"]+"/, '"id":"evt_\\u0000nul"'),
      valid.replace(/"amount_captured":\d+/, `"amount_captured":${2 ** 40}`),
      valid.replace(/"error":null/, '"error":{"code":"x","message":"nul \\u0000 inside","retryable":false}'),
    ];
    for (let index = 0; index < 20; index += 1) bodies.push(bytes(1 + Math.floor(random() * 2000)));
    for (const body of bodies) {
      for (const signed of [false, true]) {
        const headers: Record<string, string> = signed
          ? { 'sandbox-signature': sandboxSignature(body.toString(), secret) }
          : { 'sandbox-signature': `t=${Math.floor(random() * 1e10)},v1=${bytes(32).toString('hex')}` };
        const response = await postCallback(shop.merchantId, shop.connectorAccountId, body, headers);
        expect(response.status, `body ${body.slice(0, 40).toString()} signed=${signed}`).toBeLessThan(500);
      }
    }
    const tooLarge = await postCallback(shop.merchantId, shop.connectorAccountId, Buffer.alloc(300 * 1024, 'a'));
    expect(tooLarge.status).toBe(413);
    const read = await readPayment(shop, payment.id);
    expect([read.status, read.version]).toEqual(['PROCESSING', payment.version]);
  });
});
