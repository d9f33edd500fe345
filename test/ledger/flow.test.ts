// Issue 21's "Done when", end to end over HTTP: a platform onboards a connected merchant, takes a split payment
// with a fee for it (X-Connected-Merchant-Id), refunds part of it and pays the merchant out; every balance,
// the ledger entries (paged and filtered), the payment's fee and splits and the webhooks say so. Then
// createPayment's fee and split errors, each naming its field and writing nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  BalanceDocument,
  BusinessProfilesDocument,
  CreateApiKeyDocument,
  ConnectedBalancesDocument,
  CreatePaymentDocument,
  CreatePayoutDocument,
  CreateRefundDocument,
  LedgerEntriesDocument,
  PaymentTermsDocument,
  PayoutDocument,
  UpdateBusinessProfileDocument,
  type CreatePaymentInput,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf, type Execute } from '../support/graphql-client.ts';
import { actingClient, connectMerchant, createPlatform } from '../support/platforms.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

let stack: Stack;
let sql: pg.Client;
let receiver: Receiver;
let platform: Awaited<ReturnType<typeof createPlatform>>;
let asPlatform: Execute;
let seller: { id: string; client: Execute };
let partner: { id: string; client: Execute };

async function onboard(name: string) {
  const { id } = await connectMerchant(stack.api, platform, name);
  const client = actingClient(stack.api, platform.secretKey, id);
  const profileId = dataOf(await client(BusinessProfilesDocument, {})).businessProfiles[0]!.id;
  dataOf(await client(UpdateBusinessProfileDocument, { input: { profileId, webhookUrl: receiver.url } }));
  // Its own processor account: payouts leave from the merchant's own accounts.
  const { account } = await addConnectorAccount(stack, { secret: client }, 'sandbox');
  const registered = await fetch(`${stack.api.url}/account/${id}/webhooks/${account.id}`, {
    method: 'POST',
    headers: { 'api-key': platform.secretKey, 'X-Connected-Merchant-Id': id },
  });
  expect(registered.status).toBe(200);
  return { id, client };
}

beforeAll(async () => {
  stack = await startStack({ sandboxPayoutSettleMs: 150 });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
  receiver = await startReceiver();
  platform = await createPlatform(stack.api, 'Marketplace');
  asPlatform = actingClient(stack.api, platform.secretKey);
  seller = await onboard('Seller');
  partner = await onboard('Partner');
});

afterAll(async () => {
  await receiver?.close();
  await sql?.end();
  await stack?.close();
});

const balanceOf = async (client: Execute) => dataOf(await client(BalanceDocument)).merchant.balance;
const entriesOf = async (client: Execute, args: { first?: number; after?: string; currency?: string; paymentId?: string } = {}) =>
  dataOf(await client(LedgerEntriesDocument, args)).merchant.ledgerEntries;
const usd = (available: number) => [{ currency: 'USD', available, pending: 0 }];

/** The webhook bodies of `eventType` about `objectId` (payment_id, refund_id or payout_id) that reached the receiver. */
const webhooks = (eventType: string, key: string, objectId: string) =>
  receiver.bodies().filter((body) => body.event_type === eventType && body.content.object[key] === objectId);

describe('a platform’s split payment with a fee, refunded in part and paid out', () => {
  it('moves every balance as the ledger says, and the API, the entries and the webhooks agree', async () => {
    // The platform takes a 10,000 payment for its seller: a 1,000 fee, 3,000 to a partner, 6,000 to the seller.
    const splits = [
      { merchantId: partner.id, amount: 3_000 },
      { merchantId: seller.id, amount: 6_000 },
    ];
    const input = { amount: 10_000, currency: 'USD', confirm: true, paymentMethodData: card(), applicationFeeAmount: 1_000, splits };
    const payment = dataOf(await seller.client(CreatePaymentDocument, { input })).createPayment;
    expect(payment.status).toBe('SUCCEEDED');
    expect(dataOf(await seller.client(PaymentTermsDocument, { id: payment.id })).payment).toEqual({
      id: payment.id,
      status: 'SUCCEEDED',
      amount: 10_000,
      amountReceived: 10_000,
      applicationFeeAmount: 1_000,
      splits,
    });
    expect(await balanceOf(asPlatform)).toEqual(usd(1_000));
    expect(await balanceOf(seller.client)).toEqual(usd(6_000));
    expect(await balanceOf(partner.client)).toEqual(usd(3_000));

    // A refund of 2,500 takes a quarter of each share back.
    const refund = dataOf(await seller.client(CreateRefundDocument, { input: { paymentId: payment.id, amount: 2_500 } })).createRefund;
    expect(refund.status).toBe('SUCCEEDED');
    expect(await balanceOf(asPlatform)).toEqual(usd(750));
    expect(await balanceOf(seller.client)).toEqual(usd(4_500));
    expect(await balanceOf(partner.client)).toEqual(usd(2_250));

    // The seller is paid out all it holds; a cent more is refused, and writes nothing.
    const destination = { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, holderName: 'Ada Lovelace' } };
    const payouts = await sql.query('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [seller.id]);
    const over = errorOf(await seller.client(CreatePayoutDocument, { input: { amount: 4_501, currency: 'USD', destination } }), 'INSUFFICIENT_BALANCE');
    expect(over.extensions).toMatchObject({ field: 'amount', merchantId: seller.id, currency: 'USD', available: 4_500, needed: 4_501 });
    expect((await sql.query('SELECT count(*)::int AS n FROM payouts WHERE merchant_id = $1', [seller.id])).rows).toEqual(payouts.rows);
    const payout = dataOf(await seller.client(CreatePayoutDocument, { input: { amount: 4_500, currency: 'USD', destination } })).createPayout;
    expect(await balanceOf(seller.client)).toEqual(usd(0));
    await vi.waitFor(async () => expect(dataOf(await seller.client(PayoutDocument, { id: payout.id })).payout?.status).toBe('SUCCEEDED'), {
      timeout: 8000,
      interval: 50,
    });
    expect(await balanceOf(seller.client)).toEqual(usd(0));
    // Its refund of the rest would take 4,500 of the seller's share, which it paid out: refused.
    errorOf(await seller.client(CreateRefundDocument, { input: { paymentId: payment.id } }), 'INSUFFICIENT_BALANCE');

    // The platform sees its connected merchants' balances.
    const connected = dataOf(await asPlatform(ConnectedBalancesDocument, { first: 100 })).connectedMerchants.edges.map((edge) => edge.node);
    expect(connected).toEqual(
      expect.arrayContaining([
        { id: seller.id, balance: usd(0) },
        { id: partner.id, balance: usd(2_250) },
      ]),
    );

    // A EUR payment of the seller's own (no splits): 900 to it, the 100 fee to the platform.
    const euros = dataOf(
      await seller.client(CreatePaymentDocument, {
        input: { amount: 1_000, currency: 'EUR', confirm: true, paymentMethodData: card(), applicationFeeAmount: 100 },
      }),
    ).createPayment;
    expect(dataOf(await seller.client(PaymentTermsDocument, { id: euros.id })).payment).toMatchObject({ applicationFeeAmount: 100, splits: null });
    expect(await balanceOf(seller.client)).toEqual([
      { currency: 'EUR', available: 900, pending: 0 },
      { currency: 'USD', available: 0, pending: 0 },
    ]);
    expect(await balanceOf(asPlatform)).toEqual([
      { currency: 'EUR', available: 100, pending: 0 },
      { currency: 'USD', available: 750, pending: 0 },
    ]);

    // The seller's ledger, newest first, paged two at a time.
    const all = await entriesOf(seller.client, { first: 100 });
    expect(all.pageInfo.hasNextPage).toBe(false);
    expect(all.edges.map(({ node }) => [node.type, node.role, node.sourceId, node.paymentId, node.currency, node.amount])).toEqual([
      ['capture', 'merchant', euros.id, euros.id, 'EUR', 900],
      ['payout', 'merchant', payout.id, null, 'USD', -4_500],
      ['refund', 'split', refund.id, payment.id, 'USD', -1_500],
      ['capture', 'split', payment.id, payment.id, 'USD', 6_000],
    ]);
    const firstPage = await entriesOf(seller.client, { first: 2 });
    expect(firstPage.pageInfo).toEqual({ hasNextPage: true, endCursor: firstPage.edges[1]!.cursor });
    const secondPage = await entriesOf(seller.client, { first: 2, after: firstPage.pageInfo.endCursor! });
    expect(secondPage.pageInfo.hasNextPage).toBe(false);
    expect([...firstPage.edges, ...secondPage.edges].map((edge) => edge.node.id)).toEqual(all.edges.map((edge) => edge.node.id));
    expect((await entriesOf(seller.client, { currency: 'EUR' })).edges.map((edge) => edge.node.amount)).toEqual([900]);
    expect((await entriesOf(seller.client, { paymentId: payment.id })).edges.map((edge) => edge.node.amount)).toEqual([-1_500, 6_000]);
    expect((await entriesOf(asPlatform, { paymentId: payment.id })).edges.map(({ node }) => [node.role, node.amount])).toEqual([
      ['application_fee', -250],
      ['application_fee', 1_000],
    ]);
    expect((await entriesOf(partner.client)).edges.map(({ node }) => [node.type, node.role, node.amount])).toEqual([
      ['refund', 'split', -750],
      ['capture', 'split', 3_000],
    ]);
    // Each movement adds up to zero with its processor side.
    const transactionIds = all.edges.map((edge) => edge.node.transactionId);
    const { rows } = await sql.query('SELECT transaction_id, SUM(amount)::int AS total FROM ledger_entries WHERE transaction_id = ANY($1) GROUP BY 1', [
      transactionIds,
    ]);
    expect(rows.map((row) => row.total)).toEqual(transactionIds.map(() => 0));

    // The seller's endpoint heard of each.
    await vi.waitFor(
      () => {
        expect(webhooks('payment_succeeded', 'payment_id', payment.id)).toHaveLength(1);
        expect(webhooks('refund_succeeded', 'refund_id', refund.id)).toHaveLength(1);
        expect(webhooks('payout_success', 'payout_id', payout.id)).toHaveLength(1);
        expect(webhooks('payment_succeeded', 'payment_id', euros.id)).toHaveLength(1);
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(webhooks('refund_succeeded', 'refund_id', refund.id)[0]!.content.object).toMatchObject({ amount: 2_500, payment_id: payment.id });
    expect(webhooks('payout_success', 'payout_id', payout.id)[0]!.content.object).toMatchObject({ amount: 4_500, currency: 'USD' });
  });

  it('a full refund gives back the fee and every split exactly', async () => {
    const splits = [
      { merchantId: partner.id, amount: 333 },
      { merchantId: seller.id, amount: 567 },
    ];
    const input = { amount: 1_001, currency: 'USD', confirm: true, paymentMethodData: card(), applicationFeeAmount: 101, splits };
    const payment = dataOf(await seller.client(CreatePaymentDocument, { input })).createPayment;
    for (const amount of [333, 333]) dataOf(await seller.client(CreateRefundDocument, { input: { paymentId: payment.id, amount } }));
    dataOf(await seller.client(CreateRefundDocument, { input: { paymentId: payment.id } }));
    const { rows } = await sql.query('SELECT merchant_id, SUM(amount)::int AS total FROM ledger_entries WHERE payment_id = $1 GROUP BY 1', [payment.id]);
    expect(rows.map((row) => row.total)).toEqual([0, 0, 0, 0]);
  });
});

describe('createPayment’s fee and splits, refused naming the field, writing nothing', () => {
  let plain: Awaited<ReturnType<typeof createMerchant>>;
  let otherPlatformSeller: string;
  let sellerOwnKey: Execute;
  beforeAll(async () => {
    plain = await createMerchant(stack.api);
    const other = await createPlatform(stack.api, 'Other marketplace');
    otherPlatformSeller = (await connectMerchant(stack.api, other, 'Other seller')).id;
    const key = dataOf(await seller.client(CreateApiKeyDocument, { input: { name: 'own', type: 'SECRET' } })).createApiKey.key;
    sellerOwnKey = stack.api.as(key);
  });

  const base = { amount: 1_000, currency: 'USD' };
  const cases: [string, () => Execute, () => Partial<CreatePaymentInput>, string, RegExp][] = [
    ['a fee over the amount', () => seller.client, () => ({ applicationFeeAmount: 1_001 }), 'applicationFeeAmount', /must not exceed amount/],
    ['a negative fee', () => seller.client, () => ({ applicationFeeAmount: -1 }), 'applicationFeeAmount', /must not be negative/],
    [
      'splits not adding up to the amount less the fee',
      () => seller.client,
      () => ({ applicationFeeAmount: 100, splits: [{ merchantId: partner.id, amount: 800 }] }),
      'splits',
      /add up to amount less applicationFeeAmount \(900\), not 800/,
    ],
    [
      'a merchant named twice',
      () => seller.client,
      () => ({
        splits: [
          { merchantId: partner.id, amount: 500 },
          { merchantId: partner.id, amount: 500 },
        ],
      }),
      'splits.1.merchantId',
      /second time/,
    ],
    ...(
      [
        ['another platform’s connected merchant', () => otherPlatformSeller],
        ['a plain merchant', () => plain.merchantId],
        ['a merchant that does not exist', () => 'mer_00000000000000000000000000'],
        ['the platform itself', () => platform.merchantId],
      ] as const
    ).map(
      ([name, merchantId]) =>
        [
          `a split to ${name}`,
          () => seller.client,
          () => ({
            splits: [
              { merchantId: partner.id, amount: 400 },
              { merchantId: merchantId(), amount: 600 },
            ],
          }),
          'splits.1.merchantId',
          /^splits\.1\.merchantId: must name a merchant connected to this platform$/,
        ] as [string, () => Execute, () => Partial<CreatePaymentInput>, string, RegExp],
    ),
    ['a fee from a plain merchant’s key', () => plain.secret, () => ({ applicationFeeAmount: 100 }), 'applicationFeeAmount', /only a platform/],
    ['splits from a plain merchant’s key', () => plain.secret, () => ({ splits: [{ merchantId: partner.id, amount: 1_000 }] }), 'splits', /only a platform/],
    ['a fee from a connected merchant’s own key', () => sellerOwnKey, () => ({ applicationFeeAmount: 100 }), 'applicationFeeAmount', /only a platform/],
  ];

  it.each(cases)('%s', async (_name, client, extra, field, message) => {
    const counts = async () =>
      (
        await sql.query(
          `SELECT (SELECT count(*)::int FROM payment_intents WHERE merchant_id = ANY($1)) AS payments, (SELECT count(*)::int FROM ledger_entries WHERE merchant_id = ANY($1)) AS entries`,
          [[seller.id, partner.id, platform.merchantId, plain.merchantId]],
        )
      ).rows[0];
    const before = await counts();
    const error = errorOf(await client()(CreatePaymentDocument, { input: { ...base, confirm: true, paymentMethodData: card(), ...extra() } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe(field);
    expect(error.message).toMatch(message);
    expect(await counts()).toEqual(before);
  });
});
