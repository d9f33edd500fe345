// Merchants with a webhook receiver, payments that emit events, and waiting for an event's delivery.
import { expect, vi } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, EventsDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from './graphql-client.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { merchantWithSandbox, type StackLike } from './stack.ts';

export const card = (number = '4242424242424242') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

/** A merchant whose test webhook URL is a fresh receiver. */
export async function shopWithReceiver(stack: StackLike, receiver?: Receiver) {
  const shop = await merchantWithSandbox(stack);
  const endpoint = receiver ?? (await startReceiver());
  dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, webhookUrl: endpoint.url } }));
  return { ...shop, receiver: endpoint };
}

export type Shop = Awaited<ReturnType<typeof shopWithReceiver>>;

export async function paidPayment(shop: Pick<Shop, 'secret' | 'publishable'>) {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'USD' } })).createPayment;
  return dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } })).confirmPayment;
}

/**
 * A bank debit: the processor answers that it is settling, so the payment rests in PROCESSING
 * (payment_processing) until the sandbox settles it (payment_succeeded): two events.
 */
export async function settlingPayment(shop: Pick<Shop, 'secret' | 'publishable'>) {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'EUR' } })).createPayment;
  const debit = { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } };
  return dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: debit } })).confirmPayment;
}

/** A payment the sandbox declines (confirm answers PAYMENT_DECLINED); returns its id. */
export async function declinedPayment(shop: Pick<Shop, 'secret' | 'publishable'>): Promise<string> {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 1250, currency: 'USD' } })).createPayment;
  errorOf(
    await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000002') } }),
    'PAYMENT_DECLINED',
  );
  return created.id;
}

export const eventsOf = async (shop: Pick<Shop, 'secret'>, objectId: string) =>
  dataOf(await shop.secret(EventsDocument, { objectId, first: 100 })).events.edges.map((edge) => edge.node);

/** Waits until `shop`'s event for `objectId` of `eventType` has `status`, and returns it. */
export async function eventReaching(shop: Pick<Shop, 'secret'>, objectId: string, eventType: string, status: string, timeout = 15_000) {
  return vi.waitFor(
    async () => {
      const event = (await eventsOf(shop, objectId)).find((candidate) => candidate.eventType === eventType);
      expect(event?.deliveryStatus).toBe(status);
      return event!;
    },
    { timeout, interval: 50 },
  );
}
