// A payment's commit is one statement that also writes the change's history and events, whose bodies carry
// the state it makes; that state is computed before the statement runs, from the row as read plus what the
// commit sets, under the version guard (src/modules/payments/store.ts). These flows check it
// against the database after every kind of change: the mutation's answer is what a fresh read returns, and
// the newest event's body is the wire object of the payment as stored.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { paymentWireObject } from '../../src/modules/payments/wire.ts';
import {
  CancelPaymentDocument,
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  PaymentDocument,
  type ConfirmPaymentInput,
  type CreatePaymentInput,
  type PaymentFieldsFragment,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { UpdateBusinessProfileDocument } from '../gql/graphql.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123', holderName: 'Ada Lovelace' } });

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let receiver: Receiver;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack();
  shop = await merchantWithSandbox(stack);
  // An endpoint, so events are PENDING (the insert reads the profile's endpoint in the same statement).
  receiver = await startReceiver((_request, reply) => reply.writeHead(204).end());
  dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: receiver.url } }));
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await receiver.close();
  await stack.close();
});

/** Checks `answered` (a mutation's payment) against the database, and returns it. */
async function matchesDatabase(answered: PaymentFieldsFragment): Promise<PaymentFieldsFragment> {
  const { history: _history, attempts: _attempts, ...read } = dataOf(await shop.secret(PaymentDocument, { id: answered.id })).payment;
  expect(answered).toEqual(read);
  const stored = (await stack.api.services.payments.store.find(answered.id))!;
  const { rows } = await sql.query<{ body: string; object_version: number; delivery_status: string }>(
    'SELECT body, object_version, delivery_status::text FROM events WHERE object_id = $1 ORDER BY object_version DESC, created_at DESC LIMIT 1',
    [answered.id],
  );
  if (rows[0]?.object_version === stored.version) {
    expect(JSON.parse(rows[0].body).content.object).toEqual(JSON.parse(JSON.stringify(paymentWireObject(stored, stored.activeAttempt))));
    expect(rows[0].delivery_status).not.toBe('NOT_SENT');
  }
  return answered;
}

const created = async (input: Partial<CreatePaymentInput> = {}) =>
  matchesDatabase(
    dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'EUR', description: 'commit state', metadata: { order: '42' }, ...input } }),
    ).createPayment,
  );
// The secret key throughout: a publishable key is shown less (no metadata, no card fingerprint) than a read shows.
const confirmed = async (payment: PaymentFieldsFragment, input: Partial<ConfirmPaymentInput>) =>
  matchesDatabase(dataOf(await shop.secret(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, ...input } })).confirmPayment);

describe('a commit’s state, computed before its statement runs', () => {
  it('is the stored state for a card paid at once', async () => {
    const paid = await confirmed(await created(), { paymentMethodData: card('4242424242424242') });
    expect(paid).toMatchObject({ status: 'SUCCEEDED', amountReceived: 1250, version: 2, activeAttempt: { status: 'CHARGED', card: { last4: '4242' } } });
  });

  it('is the stored state for a decline, with the processor’s error on intent and attempt', async () => {
    const payment = await created();
    errorOf(
      await shop.secret(ConfirmPaymentDocument, { input: { clientSecret: payment.clientSecret, paymentMethodData: card('4000000000000002') } }),
      'PAYMENT_DECLINED',
    );
    const { history: _history, attempts: _attempts, ...read } = dataOf(await shop.secret(PaymentDocument, { id: payment.id })).payment;
    const failed = await matchesDatabase(read);
    expect(failed).toMatchObject({
      status: 'FAILED',
      errorCode: 'card_declined',
      activeAttempt: { status: 'AUTHORIZATION_FAILED', errorCode: 'card_declined' },
    });
  });

  it('is the stored state for a 3D Secure challenge (a JSON next action) and for a bank debit (JSON details)', async () => {
    const challenged = await confirmed(await created(), { paymentMethodData: card('4000002500003155'), returnUrl: 'https://shop.example/back' });
    expect(challenged).toMatchObject({ status: 'REQUIRES_CUSTOMER_ACTION', nextAction: { type: 'REDIRECT_TO_URL' } });
    const debited = await confirmed(await created(), {
      paymentMethodData: { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } },
    });
    expect(debited).toMatchObject({
      status: 'PROCESSING',
      activeAttempt: { paymentMethodType: 'bank_debit', paymentMethodDetails: { accountHolderName: 'Ada Lovelace', ibanLast4: '3000' } },
    });
  });

  it('is the stored state for a manual capture, partial, and for a cancellation with its reason', async () => {
    const authorized = await confirmed(await created({ captureMethod: 'MANUAL' }), { paymentMethodData: card('4242424242424242') });
    expect(authorized).toMatchObject({ status: 'REQUIRES_CAPTURE', amountCapturable: 1250 });
    const captured = await matchesDatabase(
      dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: authorized.id, amountToCapture: 1000 } })).capturePayment,
    );
    expect(captured).toMatchObject({ status: 'PARTIALLY_CAPTURED', amountReceived: 1000, amountCapturable: 0 });
    const cancelled = await matchesDatabase(
      dataOf(await shop.secret(CancelPaymentDocument, { input: { paymentId: (await created()).id, cancellationReason: 'requested_by_customer' } }))
        .cancelPayment,
    );
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancellationReason: 'requested_by_customer' });
  });

  it('writes nothing unless the payment is as read: its version and its active attempt; and names only its own fields', async () => {
    const payment = await created();
    const store = stack.api.services.payments.store;
    const read = (await store.find(payment.id))!;
    const other = (await store.find((await created()).id))!;
    // Another payment's attempt in hand: refused by the guard, nothing written to either.
    await expect(store.commit({ ...read, activeAttempt: other.activeAttempt }, { moves: [], actor: 'test' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(store.commit(read, { moves: [], intent: { ['amount; DROP TABLE events' as 'amount']: 1 }, actor: 'test' })).rejects.toThrow(
      /is not a field of the payment intent/,
    );
    expect(await store.find(payment.id)).toEqual(read);
    expect(await store.find(other.id)).toEqual(other);
  });
});
