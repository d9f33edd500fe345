// A platform's fees and splits passed on to its connected merchants' own accounts at Stripe and Adyen
// (docs/platforms.md, "Processor accounts"), end to end through the fakes: the accounts recorded, the exact
// fields each processor is sent, the refusal when a merchant has no account there, and Stripe's later settlement
// held pending in the balance until the date it reports.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  ConnectedMerchantProcessorAccountsDocument,
  CreateConnectedMerchantWithAccountsDocument,
  CreateConnectorAccountDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  LedgerEntriesDocument,
  MerchantBalanceDocument,
  PaymentDocument,
  SetConnectedMerchantProcessorAccountDocument,
  type CreatePaymentInput,
} from '../gql/graphql.ts';
import { startAdyenFake, type AdyenFake } from '../fakes/adyen/server.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf, type Execute } from '../support/graphql-client.ts';
import { actingClient, createPlatform } from '../support/platforms.ts';
import { stripeKey } from '../support/stripe-shop.ts';
import { startStack, type Stack } from '../support/stack.ts';

const DAY_MS = 24 * 3600 * 1000;
const card = (number: string) => ({ card: { number, expiryMonth: 3, expiryYear: new Date().getUTCFullYear() + 2, cvc: '737' } });
const connectAccount = () => `acct_${randomBytes(8).toString('hex')}`;
const balanceAccount = () => `BA${randomBytes(10).toString('hex').toUpperCase()}`;

let stripe: FakeStripe;
let adyen: AdyenFake;
let stack: Stack;
/** How far the API's clock is ahead of the real one. */
let clockAhead = 0;

beforeAll(async () => {
  stripe = await startFakeStripe();
  adyen = await startAdyenFake();
  stack = await startStack({
    worker: false,
    env: { STRIPE_API_BASE: stripe.url, ADYEN_CHECKOUT_API_BASE: adyen.url },
    clock: () => Date.now() + clockAhead,
  });
});
afterAll(async () => {
  await stack?.close();
  await stripe?.close();
  await adyen?.close();
});
afterEach(() => {
  clockAhead = 0;
  expect(adyen.invalid).toEqual([]);
});

/** A platform with one connector account, of `connector`, and a client with its secret key. */
async function platformAt(connector: 'stripe' | 'adyen') {
  const platform = await createPlatform(stack.api, `${connector} platform`);
  const client = actingClient(stack.api, platform.secretKey);
  const credentials = connector === 'stripe' ? { apiKey: stripeKey() } : { apiKey: `AQE${randomBytes(24).toString('hex')}`, merchantAccount: 'TestMerchant' };
  dataOf(await client(CreateConnectorAccountDocument, { input: { connectorName: connector, credentials, webhookSecret: 'whsec_unused_in_these_tests' } }));
  return { ...platform, client };
}

async function connected(platform: { client: Execute }, processorAccounts: { connector: string; accountId: string }[] = []) {
  const { createConnectedMerchant } = dataOf(
    await platform.client(CreateConnectedMerchantWithAccountsDocument, { input: { name: 'Seller', processorAccounts } }),
  );
  return createConnectedMerchant.id;
}

async function pay(client: Execute, input: Partial<CreatePaymentInput> & { amount: number }, number = '4242424242424242') {
  const created = dataOf(await client(CreatePaymentDocument, { input: { currency: 'EUR', ...input } })).createPayment;
  return { id: created.id, result: await client(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card(number) } }) };
}

/** The balance of `merchantId`: the platform's own, or a connected merchant's as the platform acting for it reads it. */
const balanceOf = async (platform: { merchantId: string; secretKey: string }, merchantId: string) =>
  dataOf(await actingClient(stack.api, platform.secretKey, merchantId === platform.merchantId ? undefined : merchantId)(MerchantBalanceDocument)).merchant
    .balance;

/** What the ledger moved for `sourceId` (a refund) in the balance of `merchantId`, as the platform acting for it reads it. */
async function movedFor(platform: { merchantId: string; secretKey: string }, merchantId: string, paymentId: string, sourceId: string) {
  const acting = actingClient(stack.api, platform.secretKey, merchantId === platform.merchantId ? undefined : merchantId);
  const entries = dataOf(await acting(LedgerEntriesDocument, { first: 100, paymentId })).merchant.ledgerEntries.edges.map((edge) => edge.node);
  return entries.filter((entry) => entry.sourceId === sourceId).reduce((sum, entry) => sum + entry.amount, 0);
}

const refund = async (client: Execute, paymentId: string, amount: number) =>
  dataOf(await client(CreateRefundDocument, { input: { paymentId, amount } })).createRefund;

const intentsCreated = () => stripe.requests.filter((request) => request.method === 'POST' && request.path === '/v1/payment_intents');

describe('processor accounts of connected merchants', () => {
  it('are set at creation or later by the platform, each of its processor’s shape, and read back by the platform', async () => {
    const platform = await platformAt('stripe');
    const stripeAccount = connectAccount();
    const seller = await connected(platform, [{ connector: 'stripe', accountId: stripeAccount }]);
    const adyenAccount = balanceAccount();
    const set = dataOf(
      await platform.client(SetConnectedMerchantProcessorAccountDocument, { input: { merchantId: seller, connector: 'adyen', accountId: adyenAccount } }),
    );
    expect(set.setConnectedMerchantProcessorAccount.processorAccounts).toEqual([
      { connector: 'adyen', accountId: adyenAccount },
      { connector: 'stripe', accountId: stripeAccount },
    ]);
    const listed = dataOf(await platform.client(ConnectedMerchantProcessorAccountsDocument)).connectedMerchants.edges.map((edge) => edge.node);
    expect(listed.find((node) => node.id === seller)?.processorAccounts).toHaveLength(2);

    const refused = async (input: { connector: string; accountId: string }, field: string) =>
      expect(
        errorOf(await platform.client(SetConnectedMerchantProcessorAccountDocument, { input: { merchantId: seller, ...input } }), 'INVALID_INPUT').extensions,
      ).toMatchObject({ field });
    await refused({ connector: 'stripe', accountId: 'BA123' }, 'accountId');
    await refused({ connector: 'adyen', accountId: 'acct_123' }, 'accountId');
    await refused({ connector: 'sandbox', accountId: 'acct_123' }, 'connector');
    // Another platform's seller, or the seller acting for itself, cannot be given one.
    const other = await platformAt('stripe');
    errorOf(
      await other.client(SetConnectedMerchantProcessorAccountDocument, { input: { merchantId: seller, connector: 'stripe', accountId: stripeAccount } }),
      'NOT_FOUND',
    );
    const acting = actingClient(stack.api, platform.secretKey, seller);
    errorOf(
      await acting(SetConnectedMerchantProcessorAccountDocument, { input: { merchantId: seller, connector: 'stripe', accountId: stripeAccount } }),
      'FORBIDDEN',
    );
    const plain = await createMerchant(stack.api);
    errorOf(
      await plain.secret(SetConnectedMerchantProcessorAccountDocument, { input: { merchantId: seller, connector: 'stripe', accountId: stripeAccount } }),
      'FORBIDDEN',
    );
  });
});

describe('Stripe: destination charges', () => {
  it('a payment split to one seller with a fee is a destination charge, and its share stays pending until Stripe settles it', async () => {
    const platform = await platformAt('stripe');
    const destination = connectAccount();
    const seller = await connected(platform, [{ connector: 'stripe', accountId: destination }]);
    const { id, result } = await pay(platform.client, { amount: 10000, applicationFeeAmount: 1200, splits: [{ merchantId: seller, amount: 8800 }] });
    expect(dataOf(result).confirmPayment.status).toBe('SUCCEEDED');
    const [sent] = intentsCreated().slice(-1);
    expect(sent!.params).toMatchObject({
      amount: '10000',
      application_fee_amount: '1200',
      transfer_data: { destination },
      expand: ['latest_charge.balance_transaction'],
    });
    const intent = stripe.intents.get(String(dataOf(await platform.client(PaymentDocument, { id })).payment!.activeAttempt!.connectorTransactionId))!;
    expect(intent).toMatchObject({ application_fee_amount: 1200, transfer_data: { destination } });

    // Stripe reports the charge available in two days: pending until then, available after (the API's clock moved, no wait).
    expect(await balanceOf(platform, seller)).toEqual([{ currency: 'EUR', available: 0, pending: 8800 }]);
    expect(await balanceOf(platform, platform.merchantId)).toEqual([{ currency: 'EUR', available: 0, pending: 1200 }]);
    clockAhead = 2 * DAY_MS + 60_000;
    expect(await balanceOf(platform, seller)).toEqual([{ currency: 'EUR', available: 8800, pending: 0 }]);
  });

  it('a connected merchant’s own payment through the platform’s account goes to its Connect account, without a fee', async () => {
    const platform = await platformAt('stripe');
    const destination = connectAccount();
    const seller = await connected(platform, [{ connector: 'stripe', accountId: destination }]);
    stripe.settleAfter(0);
    try {
      const { result } = await pay(actingClient(stack.api, platform.secretKey, seller), { amount: 2500, captureMethod: 'MANUAL' });
      expect(dataOf(result).confirmPayment.status).toBe('REQUIRES_CAPTURE');
      const [sent] = intentsCreated().slice(-1);
      expect(sent!.params.transfer_data).toEqual({ destination });
      expect(sent!.params).not.toHaveProperty('application_fee_amount');
    } finally {
      stripe.settleAfter(2 * 24 * 3600);
    }
  });

  it('a refund of a destination charge reverses the transfer and refunds the fee, so the seller gives back its share as the ledger takes it', async () => {
    const platform = await platformAt('stripe');
    const seller = await connected(platform, [{ connector: 'stripe', accountId: connectAccount() }]);
    const { id, result } = await pay(platform.client, { amount: 10000, applicationFeeAmount: 1200, splits: [{ merchantId: seller, amount: 8800 }] });
    expect(dataOf(result).confirmPayment.status).toBe('SUCCEEDED');
    const refunded = await refund(platform.client, id, 2500);
    expect(refunded.status).toBe('SUCCEEDED');
    const [sent] = stripe.requests.filter((request) => request.method === 'POST' && request.path === '/v1/refunds').slice(-1);
    expect(sent!.params).toMatchObject({ amount: '2500', reverse_transfer: 'true', refund_application_fee: 'true' });
    // Stripe reverses 2500 × 8800 / 10000 from the seller and refunds 2500 × 1200 / 10000 of the fee: the ledger's shares.
    expect(await movedFor(platform, seller, id, refunded.id)).toBe(-2200);
    expect(await movedFor(platform, platform.merchantId, id, refunded.id)).toBe(-300);
  });

  it('a partial capture of a destination charge takes the fee of what it captures: the seller is transferred its ledger share', async () => {
    const platform = await platformAt('stripe');
    const seller = await connected(platform, [{ connector: 'stripe', accountId: connectAccount() }]);
    const terms = { amount: 10000, applicationFeeAmount: 1200, splits: [{ merchantId: seller, amount: 8800 }], captureMethod: 'MANUAL' as const };
    const { id, result } = await pay(platform.client, terms);
    expect(dataOf(result).confirmPayment.status).toBe('REQUIRES_CAPTURE');
    const captured = dataOf(await platform.client(CapturePaymentDocument, { input: { paymentId: id, amountToCapture: 5001 } })).capturePayment;
    expect(captured.status).toBe('PARTIALLY_CAPTURED');
    const [sent] = stripe.requests.filter((request) => request.path.endsWith('/capture')).slice(-1);
    // 5001 shared 1200 : 8800 is 600.12 and 4400.88: the seller 4401 (the larger remainder), the fee the rest.
    expect(sent!.params).toMatchObject({ amount_to_capture: '5001', application_fee_amount: '600' });
    expect(stripe.intents.get(String(captured.activeAttempt!.connectorTransactionId))).toMatchObject({ amount_received: 5001, application_fee_amount: 600 });
    expect(await balanceOf(platform, seller)).toEqual([{ currency: 'EUR', available: 0, pending: 5001 - 600 }]);
  });

  it('is refused at confirm, before Stripe is called or anything written, when a seller has no Stripe account or there are several sellers', async () => {
    const platform = await platformAt('stripe');
    const withAccount = await connected(platform, [{ connector: 'stripe', accountId: connectAccount() }]);
    const withoutAccount = await connected(platform, [{ connector: 'adyen', accountId: balanceAccount() }]);
    const before = intentsCreated().length;

    const missing = await pay(platform.client, { amount: 5000, applicationFeeAmount: 500, splits: [{ merchantId: withoutAccount, amount: 4500 }] });
    const error = errorOf(missing.result, 'INVALID_STATE');
    expect(error.extensions).toMatchObject({ field: 'splits.0.merchantId', merchantId: withoutAccount, connector: 'stripe' });
    expect(error.message).toContain('setConnectedMerchantProcessorAccount');
    expect(dataOf(await platform.client(PaymentDocument, { id: missing.id })).payment).toMatchObject({ status: 'REQUIRES_PAYMENT_METHOD', attemptCount: 1 });

    const several = await pay(platform.client, {
      amount: 5000,
      splits: [
        { merchantId: withAccount, amount: 2500 },
        { merchantId: withoutAccount, amount: 2500 },
      ],
    });
    expect(errorOf(several.result, 'INVALID_STATE').extensions).toMatchObject({ field: 'splits', connector: 'stripe' });
    expect(intentsCreated()).toHaveLength(before);
  });
});

/** A platform at Adyen with two sellers, each with its own balance account, and splits of 10,000 less a 500 fee between them. */
async function adyenMarketplace() {
  const platform = await platformAt('adyen');
  const [first, second] = [balanceAccount(), balanceAccount()];
  const sellerOne = await connected(platform, [{ connector: 'adyen', accountId: first }]);
  const sellerTwo = await connected(platform, [{ connector: 'adyen', accountId: second }]);
  const splits = [
    { merchantId: sellerOne, amount: 6000 },
    { merchantId: sellerTwo, amount: 3500 },
  ];
  return { platform, first, second, sellerOne, sellerTwo, splits };
}

describe('Adyen: split payments', () => {
  it('sends each seller’s share to its balance account and the fee as the platform’s commission, adding up to the amount', async () => {
    const { platform, first, second, sellerOne, sellerTwo, splits } = await adyenMarketplace();
    const { id, result } = await pay(platform.client, { amount: 10000, applicationFeeAmount: 500, splits }, '4111111111111111');
    expect(dataOf(result).confirmPayment.status).toBe('SUCCEEDED');
    const attempt = dataOf(await platform.client(PaymentDocument, { id })).payment!.activeAttempt!.id;
    expect(adyen.requests.at(-1)!.body.splits).toEqual([
      { type: 'BalanceAccount', account: first, amount: { value: 6000 }, reference: `${attempt}.${sellerOne}` },
      { type: 'BalanceAccount', account: second, amount: { value: 3500 }, reference: `${attempt}.${sellerTwo}` },
      { type: 'Commission', amount: { value: 500 }, reference: `${attempt}.commission` },
    ]);
    // Adyen reports no later settlement: the shares are available at once.
    expect(await balanceOf(platform, sellerTwo)).toEqual([{ currency: 'EUR', available: 3500, pending: 0 }]);
  });

  it('a partial refund is split as the ledger takes it back: each seller’s balance account gives back its step, the platform the rest', async () => {
    const { platform, first, second, sellerOne, sellerTwo, splits } = await adyenMarketplace();
    const { id, result } = await pay(platform.client, { amount: 10000, applicationFeeAmount: 500, splits }, '4111111111111111');
    expect(dataOf(result).confirmPayment.status).toBe('SUCCEEDED');
    // Adyen's split refunds name the original split's references: the attempt's.
    const attempt = dataOf(result).confirmPayment.activeAttempt!.id;
    for (const amount of [3333, 1]) {
      const refunded = await refund(platform.client, id, amount);
      const [sent] = adyen.requests.filter((request) => request.path.endsWith('/refunds')).slice(-1);
      const [one, two, fee] = await Promise.all([
        movedFor(platform, sellerOne, id, refunded.id),
        movedFor(platform, sellerTwo, id, refunded.id),
        movedFor(platform, platform.merchantId, id, refunded.id),
      ]);
      expect(one + two + fee).toBe(-amount);
      const items = [
        { type: 'BalanceAccount', account: first, amount: { value: -one }, reference: `${attempt}.${sellerOne}` },
        { type: 'BalanceAccount', account: second, amount: { value: -two }, reference: `${attempt}.${sellerTwo}` },
        { type: 'Commission', amount: { value: -fee }, reference: `${attempt}.commission` },
      ];
      // A party the step takes nothing from is left out (the 1: the ledger takes it from one party).
      expect(sent!.body).toMatchObject({ amount: { value: amount, currency: 'EUR' }, splits: items.filter((item) => item.amount.value > 0) });
    }
  });

  it('a partial capture is split as the ledger shares what it captures', async () => {
    const { platform, first, second, sellerOne, sellerTwo, splits } = await adyenMarketplace();
    const { id, result } = await pay(platform.client, { amount: 10000, applicationFeeAmount: 500, splits, captureMethod: 'MANUAL' }, '4111111111111111');
    const attempt = dataOf(result).confirmPayment.activeAttempt!.id;
    dataOf(await platform.client(CapturePaymentDocument, { input: { paymentId: id, amountToCapture: 3333 } }));
    // 3333 shared 500 : 6000 : 3500 is 166.65, 1999.8 and 1166.55: the two larger remainders get the two units left.
    expect(adyen.requests.at(-1)!.body).toMatchObject({
      amount: { value: 3333, currency: 'EUR' },
      splits: [
        { type: 'BalanceAccount', account: first, amount: { value: 2000 }, reference: `${attempt}.${sellerOne}` },
        { type: 'BalanceAccount', account: second, amount: { value: 1166 }, reference: `${attempt}.${sellerTwo}` },
        { type: 'Commission', amount: { value: 167 }, reference: `${attempt}.commission` },
      ],
    });
    // A full capture is left to the payment's own splits.
    const full = await pay(platform.client, { amount: 10000, applicationFeeAmount: 500, splits, captureMethod: 'MANUAL' }, '4111111111111111');
    dataOf(await platform.client(CapturePaymentDocument, { input: { paymentId: full.id } }));
    expect(adyen.requests.at(-1)!.body).not.toHaveProperty('splits');
  });

  it('is refused at confirm, before Adyen is called, when a seller has no balance account', async () => {
    const platform = await platformAt('adyen');
    const seller = await connected(platform, [{ connector: 'stripe', accountId: connectAccount() }]);
    const before = adyen.requests.length;
    const { result } = await pay(platform.client, { amount: 3000, splits: [{ merchantId: seller, amount: 3000 }] }, '4111111111111111');
    expect(errorOf(result, 'INVALID_STATE').extensions).toMatchObject({ field: 'splits.0.merchantId', merchantId: seller, connector: 'adyen' });
    expect(adyen.requests).toHaveLength(before);
  });
});
