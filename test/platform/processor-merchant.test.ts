// A connected merchant's payment processed through its platform's connector accounts (docs/platforms.md): after
// its own, never a sibling's or another platform's; Payment.processorMerchantId and the webhook body's
// processor_merchant_id name the platform when its account processed the payment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BusinessProfilesDocument,
  ConfirmPaymentDocument,
  CreatePayoutDocument,
  CreatePaymentDocument,
  ProcessedPaymentDocument,
  SetRoutingAlgorithmDocument,
  UpdateBusinessProfileDocument,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf, type Execute } from '../support/graphql-client.ts';
import { actingClient, connectMerchant, createPlatform } from '../support/platforms.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

/** A merchant as the test drives it: its id, a client acting as it (secret key) and its default profile. */
interface Seller {
  id: string;
  secret: Execute;
  profileId: string;
}

let stack: Stack;
let receiver: Receiver;
let platform: Awaited<ReturnType<typeof createPlatform>>;
let platformAccountId: string;
let otherPlatformAccountId: string;
/** Connected to `platform`: no account of its own, and one with its own sandbox account. */
let withoutAccount: Seller;
let withAccount: Seller;
let withAccountAccountId: string;
/** Connected to another platform, which has no account of the currency. */
let otherPlatformSeller: Seller;

async function sellerOf(owner: { secretKey: string }, name: string): Promise<Seller> {
  const { id } = await connectMerchant(stack.api, owner, name);
  const secret = actingClient(stack.api, owner.secretKey, id);
  const profileId = dataOf(await secret(BusinessProfilesDocument, {})).businessProfiles[0]!.id;
  dataOf(await secret(UpdateBusinessProfileDocument, { input: { profileId, webhookUrl: receiver.url } }));
  return { id, secret, profileId };
}

/** Creates and confirms a card payment as `seller`; the confirm's raw result and the payment's id. */
async function pay(seller: Pick<Seller, 'secret'>) {
  const created = dataOf(await seller.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'USD' } })).createPayment;
  const confirmed = await seller.secret(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } });
  return { confirmed, paymentId: created.id };
}

/** The body of the payment_succeeded webhook of `paymentId` that reached the receiver. */
async function succeededWebhookOf(paymentId: string) {
  await expect
    .poll(() => receiver.bodies().find((body) => body.event_type === 'payment_succeeded' && body.content.object.payment_id === paymentId), { timeout: 15_000 })
    .toBeDefined();
  return receiver.bodies().find((body) => body.event_type === 'payment_succeeded' && body.content.object.payment_id === paymentId) as unknown as {
    merchant_id: string;
    processor_merchant_id: string | null;
  };
}

beforeAll(async () => {
  stack = await startStack();
  receiver = await startReceiver();
  platform = await createPlatform(stack.api, 'Processing platform');
  platformAccountId = (await addConnectorAccount(stack, { secret: actingClient(stack.api, platform.secretKey) }, 'sandbox')).account.id;
  const otherPlatform = await createPlatform(stack.api, 'Other platform');
  otherPlatformAccountId = (await addConnectorAccount(stack, { secret: actingClient(stack.api, otherPlatform.secretKey) }, 'sandbox', { currencies: ['EUR'] }))
    .account.id;
  withoutAccount = await sellerOf(platform, 'Seller without an account');
  withAccount = await sellerOf(platform, 'Seller with its own account');
  withAccountAccountId = (await addConnectorAccount(stack, withAccount, 'sandbox')).account.id;
  otherPlatformSeller = await sellerOf(otherPlatform, 'Seller of the other platform');
});

afterAll(async () => {
  await receiver?.close();
  await stack?.close();
});

describe('a connected merchant’s payment through its platform’s connector account', () => {
  it('with no account of its own: succeeds at the platform’s account, and the payment and its webhook name the platform', async () => {
    const { confirmed, paymentId } = await pay(withoutAccount);
    expect(dataOf(confirmed).confirmPayment.status).toBe('SUCCEEDED');
    const { payment } = dataOf(await withoutAccount.secret(ProcessedPaymentDocument, { id: paymentId }));
    expect(payment).toEqual({
      id: paymentId,
      status: 'SUCCEEDED',
      processorMerchantId: platform.merchantId,
      activeAttempt: { connectorAccountId: platformAccountId },
    });
    const webhook = await succeededWebhookOf(paymentId);
    expect(webhook).toMatchObject({ merchant_id: withoutAccount.id, processor_merchant_id: platform.merchantId });
  });

  it('with an account of its own: goes there first, and processorMerchantId stays null', async () => {
    const { confirmed, paymentId } = await pay(withAccount);
    expect(dataOf(confirmed).confirmPayment.status).toBe('SUCCEEDED');
    const { payment } = dataOf(await withAccount.secret(ProcessedPaymentDocument, { id: paymentId }));
    expect(payment).toMatchObject({ processorMerchantId: null, activeAttempt: { connectorAccountId: withAccountAccountId } });
    expect(await succeededWebhookOf(paymentId)).toMatchObject({ merchant_id: withAccount.id, processor_merchant_id: null });
  });

  it('another platform’s accounts are never used: its seller’s payment in a currency only this platform takes is refused, nothing attempted', async () => {
    const { confirmed, paymentId } = await pay(otherPlatformSeller);
    expect(errorOf(confirmed, 'INVALID_INPUT').message).toContain('no connector account');
    const { payment } = dataOf(await otherPlatformSeller.secret(ProcessedPaymentDocument, { id: paymentId }));
    expect(payment).toMatchObject({ processorMerchantId: null, activeAttempt: { connectorAccountId: null } });
  });

  it('a plain merchant’s payment never uses anyone else’s account: with none of its own it is refused', async () => {
    const plain = await createMerchant(stack.api);
    const { confirmed, paymentId } = await pay(plain);
    expect(errorOf(confirmed, 'INVALID_INPUT').message).toContain('no connector account');
    const { payment } = dataOf(await plain.secret(ProcessedPaymentDocument, { id: paymentId }));
    expect(payment).toMatchObject({ processorMerchantId: null, activeAttempt: { connectorAccountId: null } });
  });
});

describe('a connected merchant’s payout through its platform’s connector account', () => {
  it('with no account of its own: is sent through the platform’s account, out of its balance, and names the platform', async () => {
    const { confirmed } = await pay(withoutAccount);
    expect(dataOf(confirmed).confirmPayment.status).toBe('SUCCEEDED');
    const destination = { bankAccount: { accountHolderName: 'Seller without an account', iban: 'DE89370400440532013000' } };
    const { createPayout } = dataOf(await withoutAccount.secret(CreatePayoutDocument, { input: { amount: 1000, currency: 'USD', destination } }));
    expect(createPayout).toMatchObject({ connector: 'sandbox', processorMerchantId: platform.merchantId });
    await expect
      .poll(() => receiver.bodies().find((body) => body.event_type.startsWith('payout_') && body.content.object.payout_id === createPayout.id), {
        timeout: 15_000,
      })
      .toMatchObject({ merchant_id: withoutAccount.id, processor_merchant_id: platform.merchantId });
  });
});

describe('a connected merchant’s routing algorithm', () => {
  const setPriority = (seller: Seller, ids: string[]) =>
    seller.secret(SetRoutingAlgorithmDocument, { input: { profileId: seller.profileId, algorithm: { priority: ids } } });

  it('may name its platform’s accounts, and its payments follow it there before its own', async () => {
    dataOf(await setPriority(withAccount, [platformAccountId, withAccountAccountId]));
    const { confirmed, paymentId } = await pay(withAccount);
    expect(dataOf(confirmed).confirmPayment.status).toBe('SUCCEEDED');
    const { payment } = dataOf(await withAccount.secret(ProcessedPaymentDocument, { id: paymentId }));
    expect(payment).toMatchObject({ processorMerchantId: platform.merchantId, activeAttempt: { connectorAccountId: platformAccountId } });
  });

  it('refuses a sibling’s account and another platform’s, as unknown', async () => {
    expect(errorOf(await setPriority(withoutAccount, [withAccountAccountId]), 'INVALID_INPUT').message).toContain(
      `no connector account ${withAccountAccountId}`,
    );
    expect(errorOf(await setPriority(withoutAccount, [otherPlatformAccountId]), 'INVALID_INPUT').message).toContain(
      `no connector account ${otherPlatformAccountId}`,
    );
    expect(errorOf(await setPriority(otherPlatformSeller, [platformAccountId]), 'INVALID_INPUT').message).toContain(
      `no connector account ${platformAccountId}`,
    );
  });

  it('a plain merchant’s may not name a platform’s account', async () => {
    const plain = await createMerchant(stack.api);
    const refused = await plain.secret(SetRoutingAlgorithmDocument, { input: { profileId: plain.profileId, algorithm: { priority: [platformAccountId] } } });
    expect(errorOf(refused, 'INVALID_INPUT').message).toContain(`no connector account ${platformAccountId}`);
  });
});
