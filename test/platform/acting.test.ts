// A platform acting for its connected merchants (docs/platforms.md) beyond the isolation matrix: an Idempotency-Key
// is kept per merchant acted for, the header works over graphql-ws too, and connectedMerchants pages like every list.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActingMerchantDocument, ConnectedMerchantsDocument, CreatePaymentDocument } from '../gql/graphql.ts';
import { createMerchant, startTestApi, type TestApi } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { actingClient, CONNECTED_MERCHANT_HEADER, connectMerchant, createPlatform } from '../support/platforms.ts';
import { subscribeWs, wsClient } from '../support/subscriptions.ts';

let api: TestApi;
let platform: Awaited<ReturnType<typeof createPlatform>>;
let sellers: { id: string }[];

beforeAll(async () => {
  api = await startTestApi();
  platform = await createPlatform(api, 'Marketplace');
  sellers = [];
  // One after the other, so their creation order is the order the list must reverse.
  for (const name of ['Seller one', 'Seller two', 'Seller three']) sellers.push(await connectMerchant(api, platform, name));
});

afterAll(async () => {
  await api?.close();
});

describe('Idempotency-Key with X-Connected-Merchant-Id', () => {
  it('keeps one record per merchant acted for: the same key for two merchants is two payments, each replayed to its own merchant', async () => {
    const idempotencyKey = randomUUID();
    const create = (merchantId: string) =>
      actingClient(api, platform.secretKey, merchantId)(
        CreatePaymentDocument,
        { input: { amount: 700, currency: 'EUR' } },
        { 'idempotency-key': idempotencyKey },
      );
    const first = dataOf(await create(sellers[0]!.id)).createPayment;
    const second = dataOf(await create(sellers[1]!.id)).createPayment;
    expect(second.id).not.toBe(first.id);
    expect(dataOf(await create(sellers[0]!.id)).createPayment.id).toBe(first.id);
    expect(dataOf(await create(sellers[1]!.id)).createPayment.id).toBe(second.id);
  });

  it('keeps the platform’s own records apart from those of the merchants it acts for', async () => {
    const idempotencyKey = randomUUID();
    const input = { input: { amount: 900, currency: 'EUR' } };
    const forSeller = dataOf(await actingClient(api, platform.secretKey, sellers[0]!.id)(CreatePaymentDocument, input, { 'idempotency-key': idempotencyKey }));
    const own = dataOf(await actingClient(api, platform.secretKey)(CreatePaymentDocument, input, { 'idempotency-key': idempotencyKey }));
    expect(own.createPayment.id).not.toBe(forSeller.createPayment.id);
  });
});

describe('X-Connected-Merchant-Id over graphql-ws', () => {
  it('is read from connectionParams: the operation runs as the connected merchant, and a merchant of no platform of the key is refused', async () => {
    const acting = wsClient(api.url, platform.secretKey, undefined, { [CONNECTED_MERCHANT_HEADER.toLowerCase()]: sellers[2]!.id });
    const refused = wsClient(api.url, platform.secretKey, undefined, { [CONNECTED_MERCHANT_HEADER.toLowerCase()]: platform.merchantId });
    try {
      const [result] = await subscribeWs(acting, ActingMerchantDocument, {}).waitFor(1);
      expect(result!.merchant).toEqual({ id: sellers[2]!.id, isPlatform: false, platformMerchantId: platform.merchantId });
      const [error] = await subscribeWs(refused, ActingMerchantDocument, {}).waitForError();
      expect(error).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
      expect(error!.message).toContain(CONNECTED_MERCHANT_HEADER);
    } finally {
      await Promise.all([acting.dispose(), refused.dispose()]);
    }
  });
});

describe('a header sent but not usable is refused, never read as absent (which would act as the platform itself)', () => {
  it('over HTTP: an empty X-Connected-Merchant-Id is FORBIDDEN and nothing is written', async () => {
    const before = await api.context.db.paymentIntent.count({ where: { merchantId: platform.merchantId } });
    const error = errorOf(
      await actingClient(api, platform.secretKey)(CreatePaymentDocument, { input: { amount: 700, currency: 'EUR' } }, { [CONNECTED_MERCHANT_HEADER]: '' }),
      'FORBIDDEN',
    );
    expect(error.message).toContain(CONNECTED_MERCHANT_HEADER);
    expect(await api.context.db.paymentIntent.count({ where: { merchantId: platform.merchantId } })).toBe(before);
  });

  it('over graphql-ws: the header’s own spelling acts for the merchant; an empty or non-string value is FORBIDDEN', async () => {
    const spelled = wsClient(api.url, platform.secretKey, undefined, { [CONNECTED_MERCHANT_HEADER]: sellers[1]!.id });
    const empty = wsClient(api.url, platform.secretKey, undefined, { connectedMerchantId: ' ' });
    const number = wsClient(api.url, platform.secretKey, undefined, { [CONNECTED_MERCHANT_HEADER.toLowerCase()]: 42 });
    try {
      const [result] = await subscribeWs(spelled, ActingMerchantDocument, {}).waitFor(1);
      expect(result!.merchant).toMatchObject({ id: sellers[1]!.id });
      for (const refused of [empty, number]) {
        const [error] = await subscribeWs(refused, ActingMerchantDocument, {}).waitForError();
        expect(error).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
      }
    } finally {
      await Promise.all([spelled.dispose(), empty.dispose(), number.dispose()]);
    }
  });

  it('on the webhook registration route: a key that is not a platform’s, sending the header, is FORBIDDEN', async () => {
    const plain = await createMerchant(api);
    const registered = await fetch(`${api.url}/account/${plain.merchantId}/webhooks/mca_none`, {
      method: 'POST',
      headers: { 'api-key': plain.secretKey, [CONNECTED_MERCHANT_HEADER]: sellers[0]!.id },
    });
    expect(registered.status).toBe(403);
    expect(await registered.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
  });
});

describe('connectedMerchants', () => {
  it('pages newest first with the cursor of every list', async () => {
    const list = actingClient(api, platform.secretKey);
    const page = dataOf(await list(ConnectedMerchantsDocument, { first: 2 })).connectedMerchants;
    expect(page.edges.map((edge) => edge.node.id)).toEqual([sellers[2]!.id, sellers[1]!.id]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const rest = dataOf(await list(ConnectedMerchantsDocument, { first: 2, after: page.pageInfo.endCursor })).connectedMerchants;
    expect(rest.edges.map((edge) => edge.node.id)).toEqual([sellers[0]!.id]);
    expect(rest.pageInfo).toEqual({ hasNextPage: false, endCursor: rest.edges[0]!.cursor });
  });

  it('refuses a forged cursor on `after`', async () => {
    const error = errorOf(await actingClient(api, platform.secretKey)(ConnectedMerchantsDocument, { after: 'bm90LWEtY3Vyc29y' }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('after');
  });
});
