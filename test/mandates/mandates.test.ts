// Mandates end to end over HTTP: a customer's setup payment (setupFutureUsage OFF_SESSION) creates one,
// merchant-initiated payments charge it off session through the sandbox, and once revoked (by the merchant or
// by the processor's signed callback) it is never charged again, even by charges racing the revocation.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  MandateDocument,
  MandatesDocument,
  PaymentMandateDocument,
  RevokeMandateDocument,
  SyncPaymentDocument,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { diedBeforeAnswering } from '../support/idempotency.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { eventReaching, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let shop: Shop;
beforeAll(async () => {
  stack = await startStack();
  shop = await shopWithReceiver(stack);
  const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
    method: 'POST',
    headers: { 'api-key': shop.secretKey },
  });
  expect(registered.status).toBe(200);
});
afterAll(async () => {
  await stack.close();
});

const card = (number = '4242424242424242') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });
let customerCounter = 0;

/** A customer's setup payment, paid by card: returns the payment and the mandate it created. */
async function setUp(merchant: Pick<Shop, 'secret' | 'publishable'> = shop, number = '4242424242424242') {
  const customerId = `cus_mandate_${Date.now()}_${++customerCounter}`;
  const created = dataOf(
    await merchant.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', customerId, setupFutureUsage: 'OFF_SESSION' } }),
  ).createPayment;
  const paid = dataOf(
    await merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } }),
  ).confirmPayment;
  expect(paid.status).toBe('SUCCEEDED');
  const { payment } = dataOf(await merchant.secret(PaymentMandateDocument, { id: created.id }));
  return { customerId, payment: paid, mandate: payment!.createdMandate! };
}

const charge = (mandateId: string, amount = 2500, merchant: Pick<Shop, 'secret'> = shop) =>
  merchant.secret(CreatePaymentDocument, { input: { amount, currency: 'EUR', mandateId, confirm: true } });

const mandateStatus = async (id: string) => dataOf(await shop.secret(MandateDocument, { id })).mandate?.status;

describe('mandates', () => {
  it('are created ACTIVE by a paid setup payment, with mandate_active, and list under the customer', async () => {
    const { customerId, payment, mandate } = await setUp();
    expect(mandate).toMatchObject({
      status: 'ACTIVE',
      customerId,
      paymentId: payment.id,
      paymentMethod: { last4: '4242', connector: 'sandbox' },
      revokedAt: null,
    });
    expect(dataOf(await shop.secret(MandatesDocument, { customerId })).mandates.map(({ id }) => id)).toEqual([mandate.id]);
    const event = await eventReaching(shop, mandate.id, 'MANDATE_ACTIVE', 'DELIVERED');
    const body = shop.receiver.bodies().find((candidate) => candidate.event_id === event.id)!;
    expect(body.content.type).toBe('mandate_details');
    expect(body.content.object).toMatchObject({
      mandate_id: mandate.id,
      status: 'active',
      customer_id: customerId,
      payment_id: payment.id,
      card: { last4: '4242' },
    });
    const processorPayment = await (
      await fetch(`${stack.sandboxUrl}/v1/payments/${payment.activeAttempt.connectorTransactionId}`, {
        headers: { authorization: `Bearer ${shop.sandboxKey}` },
      })
    ).json();
    expect(processorPayment.payment_method_token).toMatch(/^pm_/);
    expect(JSON.stringify(body)).not.toContain(processorPayment.payment_method_token); // never the processor's token
  });

  it('are written in the same transaction as the paid setup: when the mandate cannot be written, the payment is not recorded paid either, and a sync completes both', async () => {
    const customerId = `cus_atomic_${Date.now()}`;
    const sql = new pg.Client({ connectionString: inject('databaseUrl') });
    await sql.connect();
    // A fault in the mandate's write, for this customer only.
    await sql.query(
      `CREATE OR REPLACE FUNCTION refuse_mandate() RETURNS trigger AS $$ BEGIN IF NEW.customer_id = '${customerId}' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await sql.query(`CREATE TRIGGER refuse_mandate BEFORE INSERT ON mandates FOR EACH ROW EXECUTE FUNCTION refuse_mandate()`);
    try {
      const created = dataOf(
        await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', customerId, setupFutureUsage: 'OFF_SESSION' } }),
      ).createPayment;
      errorOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }), 'INTERNAL');
      const half = dataOf(await shop.secret(PaymentMandateDocument, { id: created.id })).payment!;
      expect(half).toMatchObject({ status: 'PROCESSING', createdMandate: null });
      expect((await sql.query(`SELECT count(*)::int AS n FROM saved_payment_methods WHERE customer_id = $1`, [customerId])).rows[0].n).toBe(0);
      await sql.query(`DROP TRIGGER refuse_mandate ON mandates`);
      expect(dataOf(await shop.secret(SyncPaymentDocument, { input: { paymentId: created.id } })).syncPayment.status).toBe('SUCCEEDED');
      expect(dataOf(await shop.secret(PaymentMandateDocument, { id: created.id })).payment!.createdMandate).toMatchObject({ status: 'ACTIVE', customerId });
    } finally {
      await sql.query(`DROP TRIGGER IF EXISTS refuse_mandate ON mandates`);
      await sql.query(`DROP FUNCTION IF EXISTS refuse_mandate()`);
      await sql.end();
    }
  });

  it('are not created by a declined setup payment', async () => {
    const customerId = `cus_declined_${Date.now()}`;
    const created = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', customerId, setupFutureUsage: 'OFF_SESSION' } }),
    ).createPayment;
    errorOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000002') } }),
      'PAYMENT_DECLINED',
    );
    expect(dataOf(await shop.secret(MandatesDocument, { customerId })).mandates).toEqual([]);
  });

  it('charge the customer off session: no CVC, no customer action, the mandate’s customer and card', async () => {
    const { customerId, mandate } = await setUp();
    const paid = dataOf(await charge(mandate.id, 4200)).createPayment;
    expect(paid).toMatchObject({
      status: 'SUCCEEDED',
      amountReceived: 4200,
      nextAction: null,
      activeAttempt: { card: { last4: '4242' }, connector: 'sandbox' },
    });
    const { payment } = dataOf(await shop.secret(PaymentMandateDocument, { id: paid.id }));
    expect(payment).toMatchObject({ customerId, mandateId: mandate.id, createdMandate: null });
  });

  it('once revoked by the merchant (mandate_revoked), are never charged again', async () => {
    const { mandate } = await setUp();
    const revoked = dataOf(await shop.secret(RevokeMandateDocument, { input: { mandateId: mandate.id } })).revokeMandate;
    expect(revoked).toMatchObject({ status: 'REVOKED', revokedBy: expect.stringMatching(/^key_/), version: 1 });
    await eventReaching(shop, mandate.id, 'MANDATE_REVOKED', 'DELIVERED');
    const refused = errorOf(await charge(mandate.id), 'INVALID_STATE');
    expect(refused.message).toMatch(/is revoked and can no longer be charged/);
    errorOf(await shop.secret(RevokeMandateDocument, { input: { mandateId: mandate.id } }), 'INVALID_STATE');
  });

  it('are revoked by the processor’s signed callback when the customer revokes at their bank', async () => {
    const { payment, mandate } = await setUp();
    const processorPayment = await (
      await fetch(`${stack.sandboxUrl}/v1/payments/${payment.activeAttempt.connectorTransactionId}`, {
        headers: { authorization: `Bearer ${shop.sandboxKey}` },
      })
    ).json();
    const response = await fetch(`${stack.sandboxUrl}/v1/test_helpers/payment_methods/${processorPayment.payment_method_token}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    await vi.waitFor(async () => expect(await mandateStatus(mandate.id)).toBe('REVOKED'), { timeout: 5000, interval: 50 });
    expect(dataOf(await shop.secret(MandateDocument, { id: mandate.id })).mandate).toMatchObject({ revokedBy: 'processor' });
    await eventReaching(shop, mandate.id, 'MANDATE_REVOKED', 'DELIVERED');
    errorOf(await charge(mandate.id), 'INVALID_STATE');
  });

  it('keep the token they were set up with: re-saving the card neither moves them nor hides their revocation', async () => {
    const { customerId, payment, mandate } = await setUp();
    const original = await (
      await fetch(`${stack.sandboxUrl}/v1/payments/${payment.activeAttempt.connectorTransactionId}`, {
        headers: { authorization: `Bearer ${shop.sandboxKey}` },
      })
    ).json();
    // The same customer pays with the same card again and saves it: the saved card now holds a newer token.
    const again = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', customerId } })).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: again.clientSecret, paymentMethodData: card(), savePaymentMethod: true } }));
    expect(dataOf(await charge(mandate.id)).createPayment.status).toBe('SUCCEEDED');
    const revoked = await fetch(`${stack.sandboxUrl}/v1/test_helpers/payment_methods/${original.payment_method_token}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(revoked.status).toBe(200);
    await vi.waitFor(async () => expect(await mandateStatus(mandate.id)).toBe('REVOKED'), { timeout: 5000, interval: 50 });
    errorOf(await charge(mandate.id), 'INVALID_STATE');
  });

  it('are never charged after a revocation that races charges', async () => {
    const { mandate } = await setUp();
    const charges = Array.from({ length: 10 }, () => charge(mandate.id, 300));
    const revocation = shop.secret(RevokeMandateDocument, { input: { mandateId: mandate.id } });
    const results = await Promise.all(charges);
    expect(dataOf(await revocation).revokeMandate.status).toBe('REVOKED');
    for (const result of results) {
      // Each charge either claimed the mandate before the revocation (and went on) or was refused.
      if (result.errors) expect(result.errors[0]!.extensions!['code']).toBe('INVALID_STATE');
      else expect(result.data!.createPayment.status).toBe('SUCCEEDED');
    }
    const after = await Promise.all(Array.from({ length: 5 }, () => charge(mandate.id, 300)));
    for (const result of after) expect(result.errors?.[0]?.extensions?.['code']).toBe('INVALID_STATE');
  });

  /** A charge of 400 EUR on `mandateId` under Idempotency-Key `key`, sent as often as called, with a database client for `check`. */
  async function withKeyedCharge(mandateId: string, key: string, check: (send: () => Promise<Response>, sql: pg.Client) => Promise<void>) {
    const headers = { 'content-type': 'application/json', 'api-key': shop.secretKey, 'idempotency-key': key };
    const body = JSON.stringify({ query: CreatePaymentDocument.toString(), variables: { input: { amount: 400, currency: 'EUR', mandateId, confirm: true } } });
    const sql = new pg.Client({ connectionString: inject('databaseUrl') });
    await sql.connect();
    try {
      await check(() => fetch(`${stack.api.url}/graphql`, { method: 'POST', headers, body }), sql);
    } finally {
      await sql.end();
    }
  }

  it('charged again under one Idempotency-Key, replay the first charge and write nothing: not even the mandate’s claim (docs/architecture.md, "Idempotency")', async () => {
    const { mandate } = await setUp();
    await withKeyedCharge(mandate.id, `charge-${mandate.id}`, async (send, sql) => {
      const claimedAt = async () => (await sql.query(`SELECT updated_at FROM mandates WHERE id = $1`, [mandate.id])).rows[0].updated_at as Date;
      const first = (await (await send()).json()) as { data: { createPayment: { id: string; status: string } } };
      expect(first.data.createPayment.status).toBe('SUCCEEDED');
      const claimed = await claimedAt();
      const retry = await send();
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(((await retry.json()) as typeof first).data.createPayment.id).toBe(first.data.createPayment.id);
      expect(await claimedAt()).toEqual(claimed);
    });
  });

  it('charged under a key whose request died after charging, are not charged again: the key answers that its outcome is unknown', async () => {
    const { mandate } = await setUp();
    const key = `charge-died-${mandate.id}`;
    await withKeyedCharge(mandate.id, key, async (send, sql) => {
      const first = (await (await send()).json()) as { data: { createPayment: { status: string } } };
      expect(first.data.createPayment.status).toBe('SUCCEEDED');
      // As if its process had died after the charge, before storing the answer, more than the lease ago.
      await diedBeforeAnswering(sql, key, 6);
      const retry = await send();
      expect(retry.status).toBe(500);
      expect(((await retry.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('whether it acted is unknown');
      const charges = await sql.query(`SELECT count(*)::int AS payments FROM payment_intents WHERE mandate_id = $1`, [mandate.id]);
      expect(charges.rows[0].payments).toBe(1);
    });
  });

  it.each([
    [{ confirm: false }, 'confirm'],
    [{ paymentMethodData: card() }, 'paymentMethodData'],
    [{ setupFutureUsage: 'OFF_SESSION' as const }, 'setupFutureUsage'],
  ])('refuse a mandate payment with %j, naming %s', async (extra, field) => {
    const { mandate } = await setUp();
    const error = errorOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', mandateId: mandate.id, confirm: true, ...extra } }),
      'INVALID_INPUT',
    );
    expect(error.extensions).toMatchObject({ field });
  });

  it('need a customer to be set up, and belong to one merchant and one customer', async () => {
    const error = errorOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', setupFutureUsage: 'OFF_SESSION' } }),
      'INVALID_INPUT',
    );
    expect(error.extensions).toMatchObject({ field: 'customerId' });
    const { mandate } = await setUp();
    errorOf(
      await shop.secret(CreatePaymentDocument, {
        input: { amount: 100, currency: 'EUR', mandateId: mandate.id, confirm: true, customerId: 'cus_someone_else' },
      }),
      'NOT_FOUND',
    );
    const other = await merchantWithSandbox(stack);
    errorOf(await charge(mandate.id, 100, other), 'NOT_FOUND');
    errorOf(await other.secret(MandateDocument, { id: mandate.id }), 'NOT_FOUND');
  });
});
