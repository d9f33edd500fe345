// A platform's profile with receiveConnectedMerchantEvents (docs/platforms.md): every event of its connected
// merchants is also written for it, in the change's statement, and delivered to its endpoint signed with its
// own key, the body naming the connected merchant (merchant_id) and the processor merchant; nobody else gets
// a copy, a profile gets none unless turned on, and only a platform's profile may turn it on. Refund webhooks
// name the processor merchant of the refunded attempt.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  BusinessProfilesDocument,
  ConfirmPaymentDocument,
  ConnectedMerchantEventsSettingDocument,
  CreateBusinessProfileDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  DisputesDocument,
  EventsDocument,
  PaymentEventsDocument,
  ProcessedDisputeDocument,
  ProcessedRefundDocument,
  SetConnectedMerchantEventsDocument,
  UpdateBusinessProfileDocument,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf, type Execute } from '../support/graphql-client.ts';
import { actingClient, connectMerchant, createPlatform } from '../support/platforms.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { liveChannel, subscribeWs, untilLive, wsClient } from '../support/subscriptions.ts';
import { card } from '../support/webhooks.ts';
import { webhookSignature } from '../../src/modules/events/signature.ts';

/** A merchant as the test drives it: a client acting as it (secret key), its default profile and its endpoint. */
interface Party {
  id: string;
  secret: Execute;
  profileId: string;
  receiver: Receiver;
}

interface Body {
  merchant_id: string;
  event_id: string;
  event_type: string;
  content: { type: string; object: Record<string, unknown> };
  timestamp: string;
  processor_merchant_id: string | null;
}

let stack: Stack;
const receivers: Receiver[] = [];
/** The platform: its default profile receives its connected merchants' events; its second profile does not. */
let platform: Party & { key: string; signingKey: string; sandboxKey: string };
let platformSecondProfile: { id: string; receiver: Receiver };
/** Another platform whose profile receives its own connected merchants' events. */
let otherPlatform: Party;
let seller: Party;
let sibling: Party;

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

async function partyOf(secret: Execute, id: string): Promise<Party> {
  const profileId = dataOf(await secret(BusinessProfilesDocument, {})).businessProfiles[0]!.id;
  const endpoint = await receiver();
  dataOf(await secret(UpdateBusinessProfileDocument, { input: { profileId, webhookUrl: endpoint.url } }));
  return { id, secret, profileId, receiver: endpoint };
}

/** Turns the setting on for `party`'s default profile, with a new signing key: returns the key. */
async function receiveConnectedMerchantEvents(party: Party): Promise<string> {
  const input = { profileId: party.profileId, receiveConnectedMerchantEvents: true, generatePaymentResponseHashKey: true };
  const { updateBusinessProfile } = dataOf(await party.secret(SetConnectedMerchantEventsDocument, { input }));
  expect(updateBusinessProfile.businessProfile.receiveConnectedMerchantEvents).toBe(true);
  return updateBusinessProfile.paymentResponseHashKey!;
}

/** The request `receiver` got whose body is `eventType` about `objectId` (waits for it). */
async function requestAbout(receiver: Receiver, eventType: string, idField: string, objectId: string): Promise<{ request: ReceivedRequest; body: Body }> {
  const find = () => receiver.received.find((request) => matches(JSON.parse(request.body.toString('utf8')) as Body, eventType, idField, objectId));
  await expect.poll(find, { timeout: 15_000 }).toBeDefined();
  const request = find()!;
  return { request, body: JSON.parse(request.body.toString('utf8')) as Body };
}

const matches = (body: Body, eventType: string, idField: string, objectId: string) =>
  body.event_type === eventType && body.content.object[idField] === objectId;

const bodiesAbout = (receiver: Receiver, objectId: string) =>
  (receiver.bodies() as unknown as Body[]).filter((body) => Object.values(body.content.object).includes(objectId));

const eventsAbout = async (secret: Execute, objectId: string) =>
  dataOf(await secret(EventsDocument, { objectId, first: 100 })).events.edges.map((edge) => edge.node);

beforeAll(async () => {
  stack = await startStack({ sandboxDisputeOpenMs: 200 });
  const created = await createPlatform(stack.api, 'Listening platform');
  const platformParty = await partyOf(actingClient(stack.api, created.secretKey), created.merchantId);
  const { key: sandboxKey, account } = await addConnectorAccount(stack, platformParty, 'sandbox');
  // The sandbox reports disputes by callback to the account's registered URL.
  const registered = await fetch(`${stack.api.url}/account/${created.merchantId}/webhooks/${account.id}`, {
    method: 'POST',
    headers: { 'api-key': created.secretKey },
  });
  expect(registered.status).toBe(200);
  const second = dataOf(await platformParty.secret(CreateBusinessProfileDocument, { input: { name: 'Second' } })).createBusinessProfile.businessProfile.id;
  const secondReceiver = await receiver();
  dataOf(await platformParty.secret(UpdateBusinessProfileDocument, { input: { profileId: second, webhookUrl: secondReceiver.url } }));
  platformSecondProfile = { id: second, receiver: secondReceiver };
  platform = { ...platformParty, key: created.secretKey, sandboxKey, signingKey: await receiveConnectedMerchantEvents(platformParty) };

  const other = await createPlatform(stack.api, 'Other listening platform');
  otherPlatform = await partyOf(actingClient(stack.api, other.secretKey), other.merchantId);
  await receiveConnectedMerchantEvents(otherPlatform);
  // The other platform has a connected merchant too: its copies must stay its own.
  await connectMerchant(stack.api, other, 'Seller of the other platform');

  for (const name of ['Seller', 'Sibling']) {
    const { id } = await connectMerchant(stack.api, created, name);
    const party = await partyOf(actingClient(stack.api, created.secretKey, id), id);
    if (name === 'Seller') seller = party;
    else sibling = party;
  }
});

afterAll(async () => {
  for (const started of receivers) await started.close();
  await stack?.close();
});

describe('receiveConnectedMerchantEvents', () => {
  let paymentId: string;
  let sellerPaymentEventId: string;

  it('is off by default: a new profile of a platform shows false', async () => {
    const profiles = dataOf(await platform.secret(ConnectedMerchantEventsSettingDocument, {})).businessProfiles;
    expect(profiles.map((profile) => [profile.id, profile.receiveConnectedMerchantEvents])).toEqual([
      [platform.profileId, true],
      [platformSecondProfile.id, false],
    ]);
  });

  it('the platform’s profile receives its connected merchant’s payment webhook, signed with its own key, naming the connected merchant and the processor merchant', async () => {
    const created = dataOf(await seller.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'USD' } })).createPayment;
    paymentId = created.id;
    const confirmed = await seller.secret(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } });
    expect(dataOf(confirmed).confirmPayment.status).toBe('SUCCEEDED');

    const original = await requestAbout(seller.receiver, 'payment_succeeded', 'payment_id', paymentId);
    const copy = await requestAbout(platform.receiver, 'payment_succeeded', 'payment_id', paymentId);
    sellerPaymentEventId = original.body.event_id;
    expect(original.body).toMatchObject({ merchant_id: seller.id, processor_merchant_id: platform.id });
    // The same body but for its own event id.
    expect(copy.body.event_id).not.toBe(original.body.event_id);
    expect({ ...copy.body, event_id: original.body.event_id }).toEqual(original.body);
    expect(copy.request.headers['x-webhook-signature-512']).toBe(webhookSignature(copy.request.body, platform.signingKey));
    expect(copy.request.headers['webhook-id']).toBe(copy.body.event_id);

    // The copy is the platform's event, listed under its profile; the seller's listing has only its own.
    const platformEvents = await eventsAbout(platform.secret, paymentId);
    expect(platformEvents.map((event) => [event.id, event.profileId, event.eventType])).toEqual([
      [copy.body.event_id, platform.profileId, 'PAYMENT_SUCCEEDED'],
    ]);
    expect(platformEvents[0]!.body).toBe(copy.request.body.toString('utf8'));
    expect((await eventsAbout(seller.secret, paymentId)).map((event) => event.id)).toEqual([original.body.event_id]);
  });

  it('and its refund’s webhook, which names the processor merchant of the refunded attempt, as the seller’s does', async () => {
    const refund = dataOf(await seller.secret(CreateRefundDocument, { input: { paymentId, amount: 250 } })).createRefund;
    expect(refund.status).toBe('SUCCEEDED');
    const read = dataOf(await seller.secret(ProcessedRefundDocument, { id: refund.id })).refund;
    expect(read).toEqual({ id: refund.id, status: 'SUCCEEDED', processorMerchantId: platform.id });

    const original = await requestAbout(seller.receiver, 'refund_succeeded', 'refund_id', refund.id);
    const copy = await requestAbout(platform.receiver, 'refund_succeeded', 'refund_id', refund.id);
    expect(original.body).toMatchObject({ merchant_id: seller.id, processor_merchant_id: platform.id });
    expect(copy.body.event_id).not.toBe(original.body.event_id);
    expect({ ...copy.body, event_id: original.body.event_id }).toEqual(original.body);
    expect(copy.request.headers['x-webhook-signature-512']).toBe(webhookSignature(copy.request.body, platform.signingKey));
  });

  it('and its dispute’s webhook, which names the processor merchant of the disputed attempt', async () => {
    const created = dataOf(await seller.secret(CreatePaymentDocument, { input: { amount: 2000, currency: 'USD' } })).createPayment;
    const confirmed = dataOf(await seller.secret(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    // The network disputes the charge at the platform's processor account, which reports it by callback.
    const opened = await fetch(`${stack.sandboxUrl}/v1/test_helpers/payments/${confirmed.confirmPayment.activeAttempt.connectorTransactionId}/dispute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${platform.sandboxKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 700, reason: 'fraudulent' }),
    });
    expect(opened.status).toBe(200);
    const dispute = await vi.waitFor(
      async () => {
        const [found] = dataOf(await seller.secret(DisputesDocument, { paymentId: created.id })).disputes;
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(dataOf(await seller.secret(ProcessedDisputeDocument, { id: dispute.id })).dispute).toEqual({ id: dispute.id, processorMerchantId: platform.id });
    const original = await requestAbout(seller.receiver, 'dispute_opened', 'dispute_id', dispute.id);
    const copy = await requestAbout(platform.receiver, 'dispute_opened', 'dispute_id', dispute.id);
    expect(original.body).toMatchObject({ merchant_id: seller.id, processor_merchant_id: platform.id });
    expect({ ...copy.body, event_id: original.body.event_id }).toEqual(original.body);
    expect(copy.request.headers['x-webhook-signature-512']).toBe(webhookSignature(copy.request.body, platform.signingKey));
  });

  it('nobody else gets a copy: not the platform’s profile that is off, a sibling, or another platform', async () => {
    // Copies are written with the event, in one statement: the listings say it all once the event exists.
    for (const party of [sibling, otherPlatform]) expect(await eventsAbout(party.secret, paymentId)).toEqual([]);
    const platformEvents = await eventsAbout(platform.secret, paymentId);
    expect(platformEvents.every((event) => event.profileId === platform.profileId)).toBe(true);
    for (const endpoint of [platformSecondProfile.receiver, sibling.receiver, otherPlatform.receiver]) expect(bodiesAbout(endpoint, paymentId)).toEqual([]);
    // The seller's receiver got only its own events, the platform's only copies (one per event).
    expect(platform.receiver.bodies().map((body) => body.event_id)).not.toContain(sellerPaymentEventId);
  });

  it('a sibling’s payment is copied to the platform too, naming the sibling, and its profile’s paymentEvents subscription sees the copy', async () => {
    await addConnectorAccount(stack, sibling, 'sandbox');
    const client = wsClient(stack.api.url, platform.key);
    const watched = subscribeWs(client, PaymentEventsDocument, { profileId: platform.profileId });
    await untilLive(stack.env, liveChannel.events(platform.id));
    const created = dataOf(await sibling.secret(CreatePaymentDocument, { input: { amount: 990, currency: 'USD' } })).createPayment;
    dataOf(await sibling.secret(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    const copy = await requestAbout(platform.receiver, 'payment_succeeded', 'payment_id', created.id);
    expect(copy.body).toMatchObject({ merchant_id: sibling.id, processor_merchant_id: null });
    const [seen] = (await watched.waitFor(1)).map((result) => result.paymentEvents);
    expect(seen).toMatchObject({ id: copy.body.event_id, eventType: 'PAYMENT_SUCCEEDED', objectId: created.id });
    watched.close();
    await client.dispose();
    expect(bodiesAbout(seller.receiver, created.id)).toEqual([]);
  });
});

describe('turning receiveConnectedMerchantEvents on', () => {
  it('is refused for a plain merchant’s profile and a connected merchant’s, naming the field', async () => {
    const plain = await createMerchant(stack.api);
    for (const party of [{ secret: plain.secret, profileId: plain.profileId }, seller]) {
      const refused = await party.secret(SetConnectedMerchantEventsDocument, { input: { profileId: party.profileId, receiveConnectedMerchantEvents: true } });
      const error = errorOf(refused, 'INVALID_INPUT');
      expect(error.message).toContain('receiveConnectedMerchantEvents');
      expect(error.extensions?.field).toBe('receiveConnectedMerchantEvents');
      const profile = dataOf(await party.secret(ConnectedMerchantEventsSettingDocument, {})).businessProfiles.find((row) => row.id === party.profileId);
      expect(profile?.receiveConnectedMerchantEvents).toBe(false);
    }
  });
});
