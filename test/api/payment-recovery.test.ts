// Payments left mid-flight by a request that died (a crash, a lost network, a restart): sync brings each
// one to the processor's truth, and only once the request has certainly ended (it is "stalled").
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { CancelPaymentDocument, CapturePaymentDocument, ConfirmPaymentDocument, CreatePaymentDocument, SyncPaymentDocument } from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let sql: pg.Client;

beforeAll(async () => {
  stack = await startStack();
  shop = await merchantWithSandbox(stack);
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

/** Puts the payment's attempt in `attemptStatus` as a request that died would have left it, `ageSeconds` ago. */
async function leaveMidFlight(paymentId: string, attemptStatus: string, intentStatus: string, ageSeconds: number) {
  await sql.query(
    `UPDATE payment_attempts SET status = $2, updated_at = now() - make_interval(secs => $3)
     WHERE id = (SELECT active_attempt_id FROM payment_intents WHERE id = $1)`,
    [paymentId, attemptStatus, ageSeconds],
  );
  await sql.query('UPDATE payment_intents SET status = $2, version = version + 1 WHERE id = $1', [paymentId, intentStatus]);
}

async function authorized() {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 800, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } }));
  return created.id;
}

const sync = async (paymentId: string) => dataOf(await shop.secret(SyncPaymentDocument, { input: { paymentId } })).syncPayment;

// The default CONNECTOR_TIMEOUT_MS is 15 s, so a request is stalled after 30 s.
describe.each([
  ['a capture', 'CAPTURE_INITIATED'],
  ['a void', 'VOID_INITIATED'],
])('%s that never reached the processor', (_name, midFlight) => {
  it('gives the authorization back once stalled, so the merchant can try again', async () => {
    const paymentId = await authorized();
    await leaveMidFlight(paymentId, midFlight, 'PROCESSING', 60);
    const recovered = await sync(paymentId);
    expect(recovered.status).toBe('REQUIRES_CAPTURE');
    expect(recovered.activeAttempt.status).toBe('AUTHORIZED');
    const captured = dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId } })).capturePayment;
    expect(captured.status).toBe('SUCCEEDED');
  });

  it('stays PROCESSING while the request may still be running', async () => {
    const paymentId = await authorized();
    await leaveMidFlight(paymentId, midFlight, 'PROCESSING', 1);
    const synced = await sync(paymentId);
    expect(synced.status).toBe('PROCESSING');
    expect(synced.activeAttempt.status).toBe(midFlight);
  });
});

describe('an authorization that never reached the processor', () => {
  async function pendingWithoutProcessorPayment(ageSeconds: number) {
    const created = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 600, currency: 'USD', paymentMethodData: card('4242424242424242') } }),
    ).createPayment;
    await sql.query(
      `UPDATE payment_attempts SET connector_account_id = $2, connector_name = 'sandbox'
       WHERE id = (SELECT active_attempt_id FROM payment_intents WHERE id = $1)`,
      [created.id, shop.connectorAccountId],
    );
    await leaveMidFlight(created.id, 'PENDING', 'PROCESSING', ageSeconds);
    return created.id;
  }

  it('fails the attempt once stalled: the processor has no payment for it, so nothing was charged', async () => {
    const paymentId = await pendingWithoutProcessorPayment(60);
    const synced = await sync(paymentId);
    expect(synced).toMatchObject({ status: 'FAILED', errorCode: 'not_received_by_processor' });
    expect(synced.activeAttempt.status).toBe('AUTHORIZATION_FAILED');
  });

  it('stays PROCESSING while the request may still reach the processor', async () => {
    const paymentId = await pendingWithoutProcessorPayment(1);
    const synced = await sync(paymentId);
    expect(synced.status).toBe('PROCESSING');
    expect(synced.activeAttempt.status).toBe('PENDING');
  });
});

describe('a processor that voided an authorization while our capture was on its way', () => {
  it('fails the capture on sync (CAPTURE_FAILED), never leaves it PROCESSING', async () => {
    const paymentId = await authorized();
    const { rows } = await sql.query('SELECT connector_transaction_id FROM payment_attempts WHERE payment_id = $1', [paymentId]);
    await fetch(`${stack.sandboxUrl}/v1/payments/${rows[0].connector_transaction_id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    await leaveMidFlight(paymentId, 'CAPTURE_INITIATED', 'PROCESSING', 1);
    const synced = await sync(paymentId);
    expect(synced.status).toBe('FAILED');
    expect(synced.activeAttempt.status).toBe('CAPTURE_FAILED');
    errorOf(await shop.secret(CancelPaymentDocument, { input: { paymentId } }), 'INVALID_STATE');
  });
});

describe('createPayment with confirm: true', () => {
  it('refuses a merchant with no connector for the payment before writing anything', async () => {
    const bare = await createMerchant(stack.api);
    const error = errorOf(
      await bare.secret(CreatePaymentDocument, { input: { amount: 500, currency: 'USD', confirm: true, paymentMethodData: card('4242424242424242') } }),
      'INVALID_INPUT',
    );
    expect(error.extensions?.field).toBe('paymentMethodData');
    const { rows } = await sql.query('SELECT count(*)::int AS n FROM payment_intents WHERE merchant_id = $1', [bare.merchantId]);
    expect(rows[0].n).toBe(0);
  });
});
