// Connector health end to end (docs/routing.md, Connector health): a connector account whose processor fails
// (the sandbox's fauxpay in an outage, steered with /_control: every call a 503) opens its circuit after
// ROUTING_CIRCUIT_FAILURES failures, so the next payments skip it and say so; a second API process on the same
// database and Redis routes alike; after the cool-down one payment probes it and, the processor back, closes it.
// The cool-down is crossed by moving the API processes' routing clock, never by waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorHealthDocument, RoutingPreviewDocument } from '../gql/graphql.ts';
import { createMerchant, startTestApi, type TestApi } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { payByCard, setAlgorithm } from '../support/routing.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';

const COOLDOWN_MS = 60_000;
let now = Date.now();
const clock = () => now;

let stack: Stack;
let second: TestApi;
let shop: Awaited<ReturnType<typeof createMerchant>>;
let sandbox: string;
let fauxpay: string;

beforeAll(async () => {
  const env = { ROUTING_CIRCUIT_FAILURES: '2', ROUTING_CIRCUIT_WINDOW_MS: String(COOLDOWN_MS), ROUTING_CIRCUIT_COOLDOWN_MS: String(COOLDOWN_MS) };
  stack = await startStack({ worker: false, env, clock });
  second = await startTestApi(stack.env, { clock });
  shop = await createMerchant(stack.api);
  sandbox = (await addConnectorAccount(stack, shop, 'sandbox')).account.id;
  fauxpay = (await addConnectorAccount(stack, shop, 'fauxpay')).account.id;
  await setAlgorithm(shop, { priority: [fauxpay, sandbox] });
});
afterAll(async () => {
  await second?.close();
  await stack?.close();
});

async function steer(control: { outage: boolean }) {
  const response = await fetch(`${stack.sandboxUrl}/_control`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ processor: 'fauxpay', ...control }),
  });
  expect(response.status).toBe(200);
}

/** Each account's circuit as an API process shows it (connectorAccounts { health }). */
async function circuits(api: TestApi) {
  const accounts = dataOf(await api.as(shop.secretKey)(ConnectorHealthDocument, {})).connectorAccounts;
  return Object.fromEntries(accounts.map((account) => [account.id, account.health?.state]));
}

/** routingPreview through `api`: where a 10.00 EUR card payment would go now. */
async function preview(api: TestApi) {
  const input = { profileId: shop.profileId, amount: 1000, currency: 'EUR', paymentMethodType: 'CARD' as const };
  return dataOf(await api.as(shop.secretKey)(RoutingPreviewDocument, { input })).routingPreview;
}

describe('a connector account whose processor fails', () => {
  it('is skipped by every process while its circuit is open, probed after the cool-down, and routed to again once the probe succeeds', async () => {
    await steer({ outage: true });
    // Two failures (503: an unknown outcome, so the payment waits on fauxpay, not sent on) open the circuit.
    for (let failure = 0; failure < 2; failure += 1) {
      const { payment, accounts } = await payByCard(shop);
      expect([payment.status, accounts]).toEqual(['PROCESSING', [fauxpay]]);
    }
    expect(await circuits(stack.api)).toEqual({ [fauxpay]: 'OPEN', [sandbox]: 'CLOSED' });
    const health = dataOf(await shop.secret(ConnectorHealthDocument, {})).connectorAccounts.find((account) => account.id === fauxpay)!.health;
    expect(health!.reopensAt).toBe(new Date(now + COOLDOWN_MS).toISOString());
    expect(await circuits(second)).toEqual({ [fauxpay]: 'OPEN', [sandbox]: 'CLOSED' });

    const skipped = await payByCard(shop);
    expect([skipped.payment.status, skipped.accounts]).toEqual(['SUCCEEDED', [sandbox]]);
    expect(skipped.payment.routing).toMatchObject({ chosen: { id: sandbox }, candidates: [{ id: sandbox }] });
    expect(skipped.payment.routing!.reason).toContain(`fauxpay ${fauxpay} skipped: circuit open`);
    // The other API process decides alike.
    const elsewhere = await preview(second);
    expect(elsewhere).toMatchObject({ chosen: { id: sandbox }, candidates: [{ id: sandbox }] });
    expect(elsewhere.reason).toContain(`fauxpay ${fauxpay} skipped: circuit open`);

    await steer({ outage: false });
    now += COOLDOWN_MS;
    expect(await circuits(second)).toEqual({ [fauxpay]: 'HALF_OPEN', [sandbox]: 'CLOSED' });
    // A preview claims no probe: the next payment still holds it.
    expect((await preview(second)).chosen).toEqual({ id: fauxpay });
    const probe = await payByCard(shop);
    expect([probe.payment.status, probe.accounts]).toEqual(['SUCCEEDED', [fauxpay]]);
    expect(probe.payment.routing!.reason).toContain(`fauxpay ${fauxpay} is half-open: this payment is the probe`);
    expect(await circuits(second)).toEqual({ [fauxpay]: 'CLOSED', [sandbox]: 'CLOSED' });
    const after = await payByCard(shop);
    expect(after.accounts).toEqual([fauxpay]);
    expect(after.payment.routing!.reason).not.toContain('circuit');
  });

  it('opens again for another cool-down when its probe fails', async () => {
    await steer({ outage: true });
    for (let failure = 0; failure < 2; failure += 1) expect((await payByCard(shop)).accounts).toEqual([fauxpay]);
    expect((await circuits(stack.api))[fauxpay]).toBe('OPEN');
    now += COOLDOWN_MS;
    const probe = await payByCard(shop);
    expect([probe.payment.status, probe.accounts]).toEqual(['PROCESSING', [fauxpay]]);
    expect(await circuits(second)).toEqual({ [fauxpay]: 'OPEN', [sandbox]: 'CLOSED' });
    expect((await payByCard(shop)).accounts).toEqual([sandbox]);
    await steer({ outage: false });
  });
});
