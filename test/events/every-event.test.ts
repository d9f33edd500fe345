// Every one of the seed's 33 event types, caused by a real operation or state change of the product over
// HTTP (the API, the sandbox processor and its signed callbacks, the worker's schedules), then received at
// the merchant's endpoint: the body's event_type, its content.type (the catalog's) and the identity field
// of its content.object, and a signature that verifies over the exact bytes received.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhooks } from '@payments-orchestrator/node';
import { EVENT_TYPES, contentTypeOf, type ContentType, type EventType } from '../../src/modules/events/catalog.ts';
import {
  AcceptDisputeDocument,
  CancelPaymentDocument,
  CancelPaymentPostCaptureDocument,
  CancelPayoutDocument,
  CapturePaymentDocument,
  ChallengeDisputeDocument,
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CreatePayoutDocument,
  CreateRefundDocument,
  CreateSubscriptionDocument,
  DisputesDocument,
  PaymentMandateDocument,
  RevokeMandateDocument,
  UpdateBusinessProfileDocument,
  type CreatePaymentInput,
  type CreatePayoutInput,
} from '../gql/graphql.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { ownDatabase } from '../support/database.ts';
import type { ScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { webhookBodyErrors } from '../support/webhook-schemas.ts';
import { shopWithReceiver, type Shop } from '../support/webhooks.ts';

/** A database of this file's own: its worker sweeps, and a sweep acts on every row of its database (docs/development.md). */
let database: ScratchDatabase;
let stack: Stack;
let shop: Shop;
let surcharged: Shop;
/** A merchant whose profile allows partial authorization. */
let partial: Shop;
let sql: pg.Client;
beforeAll(async () => {
  database = await ownDatabase();
  stack = await startStack({
    sandboxBankDebitSettleMs: 300,
    sandboxRefundSettleMs: 200,
    sandboxPayoutSettleMs: 1000,
    env: { DATABASE_URL: database.url, PAYMENT_EXPIRY_SWEEP_MS: '100', SUBSCRIPTION_SWEEP_MS: '100' },
  });
  sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  shop = await shopWithReceiver(stack);
  surcharged = await shopWithReceiver(stack);
  partial = await shopWithReceiver(stack);
  for (const merchant of [shop, surcharged]) {
    const registered = await fetch(`${stack.api.url}/account/${merchant.merchantId}/webhooks/${merchant.connectorAccountId}`, {
      method: 'POST',
      headers: { 'api-key': merchant.secretKey },
    });
    expect(registered.status).toBe(200);
  }
  dataOf(
    await surcharged.secret(UpdateBusinessProfileDocument, {
      input: { profileId: surcharged.profileId, surcharges: [{ paymentMethodType: 'CARD', fixedAmount: 25 }] },
    }),
  );
  dataOf(await partial.secret(UpdateBusinessProfileDocument, { input: { profileId: partial.profileId, allowPartialAuthorization: true } }));
});
afterAll(async () => {
  await sql.end();
  await stack.close();
  await database.drop();
});

const card = (number = '4242424242424242') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

async function payment(number = '4242424242424242', extra: Partial<CreatePaymentInput> = {}, merchant: Shop = shop) {
  const created = dataOf(await merchant.secret(CreatePaymentDocument, { input: { amount: 4000, currency: 'EUR', ...extra } })).createPayment;
  const result = await merchant.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } });
  return { id: created.id, confirmed: result.data?.confirmPayment ?? null };
}

const refund = async (paymentId: string, merchant: Shop = shop) =>
  dataOf(await merchant.secret(CreateRefundDocument, { input: { paymentId } })).createRefund.id;

/** The sandbox's test helpers stand for the network, the bank and the customer's bank. */
async function sandboxHelper(path: string) {
  const response = await fetch(`${stack.sandboxUrl}/v1/test_helpers/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(response.status).toBe(200);
}

async function processorPayment(paymentId: string) {
  const transactionId = (
    await sql.query<{ connector_transaction_id: string }>(
      `SELECT a.connector_transaction_id FROM payment_intents p JOIN payment_attempts a ON a.id = p.active_attempt_id WHERE p.id = $1`,
      [paymentId],
    )
  ).rows[0]!.connector_transaction_id;
  return (await (await fetch(`${stack.sandboxUrl}/v1/payments/${transactionId}`, { headers: { authorization: `Bearer ${shop.sandboxKey}` } })).json()) as {
    id: string;
    payment_method_token: string | null;
  };
}

async function openDispute() {
  const { id } = await payment();
  await sandboxHelper(`payments/${(await processorPayment(id)).id}/dispute`);
  return vi.waitFor(
    async () => {
      const [dispute] = dataOf(await shop.secret(DisputesDocument, { paymentId: id })).disputes;
      expect(dispute).toBeDefined();
      return dispute!;
    },
    { timeout: 5000, interval: 50 },
  );
}

async function challengedDispute() {
  const dispute = await openDispute();
  dataOf(await shop.secret(ChallengeDisputeDocument, { input: { disputeId: dispute.id, evidence: { receipt: 'Order 42, delivered' } } }));
  return dispute;
}

let customers = 0;
async function mandate() {
  const customerId = `cus_every_event_${++customers}`;
  const { id } = await payment('4242424242424242', { customerId, setupFutureUsage: 'OFF_SESSION' });
  return { customerId, mandateId: dataOf(await shop.secret(PaymentMandateDocument, { id })).payment!.createdMandate!.id };
}

async function payout(destination: CreatePayoutInput['destination'], amount = 3000) {
  return dataOf(await shop.secret(CreatePayoutDocument, { input: { amount, currency: 'EUR', destination } })).createPayout;
}
const toCard = (number = '4242424242424242') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2 } });

/** What causes each event, and whose endpoint receives it: the object id its body must carry. */
const CAUSES: Record<EventType, () => Promise<{ objectId: string; merchant?: Shop }>> = {
  payment_processing: async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4000, currency: 'EUR' } })).createPayment;
    dataOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: created.clientSecret, paymentMethodData: { bankDebit: { accountHolderName: 'Ada', iban: 'DE89370400440532013000' } } },
      }),
    );
    return { objectId: created.id };
  },
  payment_succeeded: async () => ({ objectId: (await payment()).id }),
  payment_failed: async () => ({ objectId: (await payment('4000000000000002')).id }),
  payment_cancelled: async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4000, currency: 'EUR' } })).createPayment;
    dataOf(await shop.secret(CancelPaymentDocument, { input: { paymentId: created.id } }));
    return { objectId: created.id };
  },
  payment_authorized: async () => ({ objectId: (await payment('4242424242424242', { captureMethod: 'MANUAL' })).id }),
  payment_captured: async () => {
    const { id } = await payment('4242424242424242', { captureMethod: 'MANUAL' });
    dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: id, amountToCapture: 1000 } }));
    return { objectId: id };
  },
  payment_expired: async () => {
    const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 4000, currency: 'EUR' } })).createPayment;
    await sql.query(`UPDATE payment_intents SET expires_at = now() - interval '1 second', version = version + 1 WHERE id = $1`, [created.id]);
    return { objectId: created.id };
  },
  action_required: async () => ({ objectId: (await payment('4000002500003155')).id }),
  payment_cancelled_post_capture: async () => {
    const { id } = await payment();
    dataOf(await shop.secret(CancelPaymentPostCaptureDocument, { input: { paymentId: id } }));
    return { objectId: id };
  },
  payment_partially_authorized: async () => ({ objectId: (await payment('4000000000001976', { captureMethod: 'MANUAL' }, partial)).id, merchant: partial }),
  refund_succeeded: async () => ({ objectId: await refund((await payment()).id) }),
  refund_failed: async () => ({ objectId: await refund((await payment('4000000000005126')).id) }),
  refund_review: async () => ({ objectId: await refund((await payment('4000000000006975')).id) }),
  dispute_opened: async () => ({ objectId: (await openDispute()).id }),
  dispute_accepted: async () => {
    const dispute = await openDispute();
    dataOf(await shop.secret(AcceptDisputeDocument, { input: { disputeId: dispute.id } }));
    return { objectId: dispute.id };
  },
  dispute_challenged: async () => ({ objectId: (await challengedDispute()).id }),
  dispute_won: async () => {
    const dispute = await challengedDispute();
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/win`);
    return { objectId: dispute.id };
  },
  dispute_lost: async () => {
    const dispute = await challengedDispute();
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/lose`);
    return { objectId: dispute.id };
  },
  dispute_expired: async () => {
    const dispute = await openDispute();
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/expire`);
    return { objectId: dispute.id };
  },
  dispute_cancelled: async () => {
    const dispute = await openDispute();
    await sandboxHelper(`disputes/${dispute.connectorDisputeId}/cancel`);
    return { objectId: dispute.id };
  },
  mandate_active: async () => ({ objectId: (await mandate()).mandateId }),
  mandate_revoked: async () => {
    const { mandateId } = await mandate();
    dataOf(await shop.secret(RevokeMandateDocument, { input: { mandateId } }));
    return { objectId: mandateId };
  },
  payout_initiated: async () => ({ objectId: (await payout(toCard())).id }),
  payout_processing: async () => ({ objectId: (await payout(toCard())).id }),
  payout_success: async () => ({ objectId: (await payout(toCard())).id }),
  payout_failed: async () => ({ objectId: (await payout(toCard('4000000000000002'))).id }),
  payout_expired: async () => ({ objectId: (await payout({ bankAccount: { accountHolderName: 'Ada', iban: 'DE08370400440532013003' } })).id }),
  payout_cancelled: async () => {
    const sent = await payout(toCard());
    dataOf(await shop.secret(CancelPayoutDocument, { input: { payoutId: sent.id } }));
    return { objectId: sent.id };
  },
  payout_reversed: async () => {
    const sent = await payout(toCard());
    await vi.waitFor(async () => expect((await sql.query(`SELECT status FROM payouts WHERE id = $1`, [sent.id])).rows[0].status).toBe('SUCCEEDED'), {
      timeout: 10_000,
      interval: 50,
    });
    await sandboxHelper(`payouts/${sent.connectorPayoutId}/return`);
    return { objectId: sent.id };
  },
  payout_not_permitted: async () => {
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, payoutLimit: 100_000 } }));
    return { objectId: (await payout(toCard(), 100_001)).id };
  },
  invoice_paid: async () => {
    const { customerId, mandateId } = await mandate();
    const subscription = dataOf(
      await shop.secret(CreateSubscriptionDocument, { input: { customerId, mandateId, amount: 990, currency: 'EUR', interval: 'MONTH' } }),
    ).createSubscription;
    return { objectId: subscription.id };
  },
  surcharge_payment_succeeded: async () => ({ objectId: (await payment('4242424242424242', {}, surcharged)).id, merchant: surcharged }),
  surcharge_refund_succeeded: async () => {
    const { id } = await payment('4242424242424242', {}, surcharged);
    return { objectId: await refund(id, surcharged), merchant: surcharged };
  },
};

/** The field of each content shape that names its object. */
const IDENTITY: Record<ContentType, string> = {
  payment_details: 'payment_id',
  refund_details: 'refund_id',
  dispute_details: 'dispute_id',
  mandate_details: 'mandate_id',
  payout_details: 'payout_id',
  subscription_details: 'subscription_id',
};

describe('every event type of the seed', () => {
  it('has a cause in this file for each of the 33', () => {
    expect(Object.keys(CAUSES).sort()).toEqual([...EVENT_TYPES].sort());
    expect(EVENT_TYPES).toHaveLength(33);
  });

  it.each(EVENT_TYPES)('%s: caused, delivered, shaped and signed', async (eventType) => {
    const { objectId, merchant = shop } = await CAUSES[eventType]();
    const contentType = contentTypeOf(eventType);
    const received = await vi.waitFor(
      () => {
        const found = merchant.receiver.received.find((request) => {
          const body = JSON.parse(request.body.toString('utf8'));
          return body.event_type === eventType && body.content.object[IDENTITY[contentType]] === objectId;
        });
        expect(found, `${eventType} for ${objectId}`).toBeDefined();
        return found!;
      },
      // Up to the test's own limit (30 s): some causes pass through a worker's sweep and then a delivery, which a
      // full suite on 2 CPUs once took past 10 s for invoice_paid.
      { timeout: 25_000, interval: 50 },
    );
    const body = JSON.parse(received.body.toString('utf8'));
    expect(Object.keys(body).sort()).toEqual(['content', 'event_id', 'event_type', 'merchant_id', 'processor_merchant_id', 'timestamp']);
    expect(body).toMatchObject({ merchant_id: merchant.merchantId, event_type: eventType, content: { type: contentType } });
    // What the service sent verifies with the server SDK, and has the published JSON Schemas' shape.
    expect(webhooks.verify(received.body, received.headers, merchant.paymentResponseHashKey)).toEqual(body);
    expect(webhookBodyErrors(body)).toEqual([]);
    expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
  });

  it('delivered nothing else that fails to verify with the SDK or to validate against the published schemas', () => {
    const delivered = [shop, surcharged, partial].flatMap((merchant) => merchant.receiver.received.map((request) => ({ merchant, request })));
    expect(delivered.length).toBeGreaterThanOrEqual(EVENT_TYPES.length);
    for (const { merchant, request } of delivered) {
      const event = webhooks.verify(request.body, request.headers, merchant.paymentResponseHashKey);
      expect(webhookBodyErrors(event), event.event_type).toEqual([]);
      expect(event.content.type, event.event_type).toBe(contentTypeOf(event.event_type));
    }
  });

  it('keeps validating when a later version adds fields (the published schemas are open, docs/webhooks.md)', () => {
    const [first] = shop.receiver.received;
    const body = JSON.parse(first!.body.toString('utf8'));
    const later = { ...body, added_later: 1, content: { ...body.content, object: { ...body.content.object, added_later: 'x' } } };
    expect(webhookBodyErrors(later)).toEqual([]);
  });
});
