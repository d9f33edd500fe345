// Routing's decision and what it must not spend (docs/routing.md): a half-open account's probe is claimed only
// by a payment the algorithm sends to it first, and a saved card (a mandate's) goes to the account that issued
// its token whatever the algorithm, so a merchant-initiated charge is never refused by routing after its period
// or mandate was claimed. A payment routing would refuse is refused before anything is written.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentMandateDocument, PaymentRoutingDocument } from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { payByCard, setAlgorithm } from '../support/routing.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';

const COOLDOWN_MS = 60_000;
let now = Date.now();
const clock = () => now;

let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
let sql: pg.Client;
let sandbox: string;
let fauxpay: string;

beforeAll(async () => {
  const env = { ROUTING_CIRCUIT_FAILURES: '2', ROUTING_CIRCUIT_WINDOW_MS: String(COOLDOWN_MS), ROUTING_CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS) };
  stack = await startStack({ worker: false, env, clock });
  shop = await createMerchant(stack.api);
  sandbox = (await addConnectorAccount(stack, shop, 'sandbox')).account.id;
  fauxpay = (await addConnectorAccount(stack, shop, 'fauxpay')).account.id;
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await stack?.close();
});

async function outage(on: boolean) {
  const body = JSON.stringify({ processor: 'fauxpay', outage: on });
  const response = await fetch(`${stack.sandboxUrl}/_control`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
}

describe('a half-open account', () => {
  it('keeps its probe while the algorithm sends payments elsewhere, for the next payment routed to it', async () => {
    await setAlgorithm(shop, { priority: [fauxpay, sandbox] });
    await outage(true);
    for (let failure = 0; failure < 2; failure += 1) expect((await payByCard(shop)).accounts).toEqual([fauxpay]);
    await outage(false);
    now += COOLDOWN_MS;
    // Only payments tagged for it go to fauxpay; untagged ones go to the sandbox, first in the default order too.
    const conditions = [{ field: 'METADATA' as const, metadataKey: 'route', in: ['fauxpay'] }];
    await setAlgorithm(shop, { rules: { rules: [{ name: 'tagged', conditions, connectorAccountIds: [fauxpay] }], defaultConnectorAccountIds: [sandbox] } });

    const elsewhere = await payByCard(shop);
    expect([elsewhere.payment.status, elsewhere.accounts]).toEqual(['SUCCEEDED', [sandbox]]);
    expect(elsewhere.payment.routing!.reason).not.toContain('probe');
    const probe = await payByCard(shop, undefined, { metadata: { route: 'fauxpay' } });
    expect([probe.payment.status, probe.accounts]).toEqual(['SUCCEEDED', [fauxpay]]);
    expect(probe.payment.routing!.reason).toContain(`fauxpay ${fauxpay} is half-open: this payment is the probe`);
  });

  it('keeps its probe through a confirm refused for the payment’s state', async () => {
    await setAlgorithm(shop, { priority: [fauxpay, sandbox] });
    const paid = await payByCard(shop);
    expect(paid.payment.status).toBe('SUCCEEDED');
    await outage(true);
    for (let failure = 0; failure < 2; failure += 1) expect((await payByCard(shop)).accounts).toEqual([fauxpay]);
    await outage(false);
    now += COOLDOWN_MS;

    const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
    const again = await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: paid.clientSecret, paymentMethodData: { card } } });
    errorOf(again, 'INVALID_STATE');
    const probe = await payByCard(shop);
    expect([probe.payment.status, probe.accounts]).toEqual(['SUCCEEDED', [fauxpay]]);
    expect(probe.payment.routing!.reason).toContain(`fauxpay ${fauxpay} is half-open: this payment is the probe`);
  });
});

describe('a saved card', () => {
  it('is charged at the account that issued its token when the algorithm names another, the decision saying why', async () => {
    await setAlgorithm(shop, { priority: [sandbox] });
    const customerId = `cus_routing_${Date.now()}`;
    const setup = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'EUR', customerId, setupFutureUsage: 'OFF_SESSION' } }),
    ).createPayment;
    const card = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } };
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: setup.clientSecret, paymentMethodData: card } }));
    const mandateId = dataOf(await shop.secret(PaymentMandateDocument, { id: setup.id })).payment!.createdMandate!.id;

    await setAlgorithm(shop, { priority: [fauxpay] });
    const charged = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1999, currency: 'EUR', mandateId, confirm: true } })).createPayment;
    const payment = dataOf(await shop.secret(PaymentRoutingDocument, { id: charged.id })).payment!;
    expect([payment.status, payment.attempts.map((attempt) => attempt.connectorAccountId)]).toEqual(['SUCCEEDED', [sandbox]]);
    expect(payment.routing).toMatchObject({ algorithm: 'PRIORITY', chosen: { id: sandbox }, candidates: [{ id: sandbox }] });
    expect(payment.routing!.reason).toContain(`A saved card goes to the account that issued its token, sandbox ${sandbox}, whatever the routing algorithm`);
  });
});

describe('a payment the algorithm routes nowhere', () => {
  it('is refused at createPayment with confirm before anything is written', async () => {
    await setAlgorithm(shop, { priority: [sandbox] });
    const description = `unroutable ${Date.now()}`;
    const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
    const input = { amount: 1000, currency: 'EUR', confirm: true, connectors: ['fauxpay'], description, paymentMethodData: { card } };
    const error = errorOf(await shop.secret(CreatePaymentDocument, { input }), 'INVALID_INPUT');
    expect(error.message).toContain('no connector account the routing algorithm names can take this payment');
    const written = await sql.query(`SELECT count(*)::int AS n FROM payment_intents WHERE description = $1`, [description]);
    expect(written.rows[0].n).toBe(0);
  });
});
