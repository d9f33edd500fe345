// Payouts end to end over HTTP: sent through the sandbox, moved by its signed callbacks (or, without
// callbacks, by the sync schedule), cancelled before they are sent, reversed after, and refused by the
// merchant's own rules (limit, country) without reaching a processor.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CancelPayoutDocument, CreatePayoutDocument, PayoutDocument, UpdateBusinessProfileDocument, type CreatePayoutInput } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { eventReaching, eventsOf, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let shop: Shop;
beforeAll(async () => {
  // Each payout step takes 1 s at the sandbox (room to cancel one before it is sent, even on a loaded machine);
  // the worker's first scheduled sync comes after 1.5 s.
  stack = await startStack({ sandboxPayoutSettleMs: 1000, env: { PAYMENT_SYNC_DELAY_SCALE: '0.1' } });
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

const toCard = (number = '4242424242424242') => ({
  card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, holderName: 'Ada Lovelace' },
});
const toBank = (iban: string) => ({ bankAccount: { accountHolderName: 'Ada Lovelace', iban } });
const payout = async (merchant: Pick<Shop, 'secret'>, destination: CreatePayoutInput['destination'], extra: Partial<CreatePayoutInput> = {}) =>
  dataOf(await merchant.secret(CreatePayoutDocument, { input: { amount: 5000, currency: 'EUR', destination, ...extra } })).createPayout;
const statusOf = async (merchant: Pick<Shop, 'secret'>, id: string) => dataOf(await merchant.secret(PayoutDocument, { id })).payout?.status;
const reaches = (merchant: Pick<Shop, 'secret'>, id: string, status: string) =>
  vi.waitFor(async () => expect(await statusOf(merchant, id)).toBe(status), { timeout: 8000, interval: 50 });

describe('payouts', () => {
  it('to a card: initiated, processing, succeeded, each sent as its payout_* webhook; only the last four digits kept', async () => {
    const sent = await payout(shop, toCard());
    expect(sent).toMatchObject({ status: 'INITIATED', destination: { type: 'card', last4: '4242' }, connector: 'sandbox' });
    expect(sent.connectorPayoutId).toMatch(/^sbx_po_/);
    await reaches(shop, sent.id, 'SUCCEEDED');
    for (const type of ['PAYOUT_INITIATED', 'PAYOUT_PROCESSING', 'PAYOUT_SUCCESS'] as const) await eventReaching(shop, sent.id, type, 'DELIVERED');
    const body = shop.receiver.bodies().find((candidate) => candidate.event_type === 'payout_success' && candidate.content.object['payout_id'] === sent.id)!;
    expect(body.content).toMatchObject({
      type: 'payout_details',
      object: { status: 'succeeded', amount: 5000, currency: 'EUR', payout_type: 'card', destination: { type: 'card', last4: '4242' } },
    });
    expect(JSON.stringify(body)).not.toContain('4242424242424242');
  });

  it.each([
    ['a card the issuer declines', toCard('4000000000000002'), 'FAILED', 'PAYOUT_FAILED', 'card_declined'],
    ['a closed bank account', toBank('DE35370400440532013002'), 'FAILED', 'PAYOUT_FAILED', 'account_closed'],
    ['a bank account never credited in time', toBank('DE08370400440532013003'), 'EXPIRED', 'PAYOUT_EXPIRED', 'payout_expired'],
  ])('to %s: ends with its status, webhook and error', async (_name, destination, status, eventType, errorCode) => {
    const sent = await payout(shop, destination);
    await reaches(shop, sent.id, status);
    expect(dataOf(await shop.secret(PayoutDocument, { id: sent.id })).payout).toMatchObject({ errorCode });
    await eventReaching(shop, sent.id, eventType, 'DELIVERED');
  });

  it('cancelled before it is sent (payout_cancelled), and not after', async () => {
    // A sandbox whose payouts never move on their own: the cancel always comes before the send, however
    // busy the machine (with the shared stack's 1 s step, a slow cancel found the payout already paid).
    const patient = await startStack({ sandboxPayoutSettleMs: 600_000 });
    try {
      const patientShop = await shopWithReceiver(patient);
      const sent = await payout(patientShop, toBank('DE89370400440532013000'));
      const cancelled = dataOf(await patientShop.secret(CancelPayoutDocument, { input: { payoutId: sent.id } })).cancelPayout;
      expect(cancelled.status).toBe('CANCELLED');
      await eventReaching(patientShop, sent.id, 'PAYOUT_CANCELLED', 'DELIVERED');
      expect(await statusOf(patientShop, sent.id)).toBe('CANCELLED');
      errorOf(await patientShop.secret(CancelPayoutDocument, { input: { payoutId: sent.id } }), 'INVALID_STATE');
    } finally {
      await patient.close();
    }
  });

  it('reversed when the bank sends a paid payout back (payout_reversed)', async () => {
    const sent = await payout(shop, toCard());
    await reaches(shop, sent.id, 'SUCCEEDED');
    const returned = await fetch(`${stack.sandboxUrl}/v1/test_helpers/payouts/${sent.connectorPayoutId}/return`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(returned.status).toBe(200);
    await reaches(shop, sent.id, 'REVERSED');
    await eventReaching(shop, sent.id, 'PAYOUT_REVERSED', 'DELIVERED');
  });

  it('over the profile’s limit, or to a country no payout account serves, is NOT_PERMITTED and never sent', async () => {
    const limited = await shopWithReceiver(stack);
    dataOf(await limited.secret(UpdateBusinessProfileDocument, { input: { profileId: limited.profileId, payoutLimit: 1000 } }));
    const over = await payout(limited, toCard(), { amount: 1001 });
    expect(over).toMatchObject({ status: 'NOT_PERMITTED', errorCode: 'payout_not_permitted', connector: null, connectorPayoutId: null });
    expect(over.errorMessage).toMatch(/over this profile's payout limit of 1000/);
    await eventReaching(limited, over.id, 'PAYOUT_NOT_PERMITTED', 'DELIVERED');
    const lookup = await fetch(`${stack.sandboxUrl}/v1/payouts?reference=${over.id}`, { headers: { authorization: `Bearer ${limited.sandboxKey}` } });
    expect(lookup.status).toBe(404);
    expect((await payout(limited, toCard(), { amount: 1000 })).status).toBe('INITIATED');

    const german = await merchantWithSandbox(stack, 'sandbox', { countries: ['DE'] });
    const abroad = await payout(german, toCard(), { country: 'US' });
    expect(abroad).toMatchObject({ status: 'NOT_PERMITTED' });
    expect(abroad.errorMessage).toMatch(/serves US/);
    expect((await payout(german, toCard(), { country: 'DE' })).status).toBe('INITIATED');
  });

  it('at a processor without callbacks, are synced by the schedule', async () => {
    const faux = await merchantWithSandbox(stack, 'fauxpay');
    const sent = await payout(faux, toCard());
    expect(sent.connector).toBe('fauxpay');
    await reaches(faux, sent.id, 'SUCCEEDED');
    expect((await eventsOf(faux, sent.id)).map((event) => event.eventType)).toContain('PAYOUT_SUCCESS');
  });

  it.each([
    [{ card: { number: '4242424242424241', expiryMonth: 12, expiryYear: 2040 } }, 'destination.card.number'],
    [{ bankAccount: { accountHolderName: 'A', iban: 'DE00370400440532013000' } }, 'destination.bankAccount.iban'],
    [{}, 'destination'],
    [{ ...toCard(), ...toBank('DE89370400440532013000') }, 'destination'],
  ])('refuses a bad destination %j naming %s, writing nothing', async (destination, field) => {
    const error = errorOf(await shop.secret(CreatePayoutDocument, { input: { amount: 5000, currency: 'EUR', destination } }), 'INVALID_INPUT');
    expect(error.extensions).toMatchObject({ field });
  });

  it('go through the connector the merchant names, when it has several', async () => {
    const merchant = await merchantWithSandbox(stack, 'fauxpay');
    await addConnectorAccount(stack, merchant, 'sandbox');
    expect((await payout(merchant, toCard(), { connector: 'sandbox' })).connector).toBe('sandbox');
  });
});
