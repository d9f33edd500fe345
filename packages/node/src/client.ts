// The server SDK's client: a merchant backend's secret key, the API's resources as methods (docs/sdk-node.md).
// Every mutation carries an Idempotency-Key (generated per call, or the caller's) that its automatic retries
// reuse, so a retried create or refund runs once (docs/api.md, "Keys and headers").
import WebSocket from 'ws';
import { createTransport, type Document, type RequestOptions, type Transport } from '@payments-orchestrator/client-core';
import {
  SdkNodeAcceptDisputeDocument,
  SdkNodeBusinessProfilesDocument,
  SdkNodeCancelPaymentDocument,
  SdkNodeCancelPaymentPostCaptureDocument,
  SdkNodeCancelPayoutDocument,
  SdkNodeCapturePaymentDocument,
  SdkNodeChallengeDisputeDocument,
  SdkNodeConfirmPaymentDocument,
  SdkNodeCreatePaymentDocument,
  SdkNodeCreatePaymentLinkDocument,
  SdkNodeCreatePayoutDocument,
  SdkNodeCreateRefundDocument,
  SdkNodeCustomerDocument,
  SdkNodeDeactivatePaymentLinkDocument,
  SdkNodeDisputeDocument,
  SdkNodeDisputesDocument,
  SdkNodeEventDocument,
  SdkNodeEventsDocument,
  SdkNodeMerchantDocument,
  SdkNodePaymentDocument,
  SdkNodePaymentEventsDocument,
  SdkNodePaymentLinkDocument,
  SdkNodePaymentsDocument,
  SdkNodePaymentUpdatedDocument,
  SdkNodePayoutDocument,
  SdkNodePayoutsDocument,
  SdkNodeRefundDocument,
  SdkNodeRefundsDocument,
  SdkNodeRetryWebhookDeliveryDocument,
  SdkNodeSyncPaymentDocument,
  SdkNodeSyncRefundDocument,
  type CreatePaymentInput,
  type CreatePaymentLinkInput,
  type CreatePayoutInput,
  type CreateRefundInput,
  type SdkNodeDisputesQueryVariables,
  type SdkNodeEventsQueryVariables,
  type SdkNodePaymentEventsSubscriptionVariables,
  type SdkNodePaymentsQueryVariables,
  type SdkNodePayoutsQueryVariables,
} from './gql/graphql.ts';
import type { BusinessProfile, ConfirmPaymentParams, Dispute, Event, Payment, PaymentLink, Payout, Refund } from './types.ts';
import { assertKeySafeBaseUrl } from './base-url.ts';

export interface PaymentsOptions {
  /** The merchant's secret key (`sk_test_…` or `sk_live_…`). */
  apiKey: string;
  /** The service's base URL, such as `https://pay.example.com`. */
  baseUrl: string;
  /** Retries after a network error, 503, RATE_LIMITED or CONFLICT, under the same idempotency key; 2 by default. */
  maxRetries?: number;
  /** Each try's limit in ms (a ConnectionError after it, retried); 30 s by default. */
  timeoutMs?: number;
  /** The WebSocket class for updates() and live(): the global one, else the `ws` package. */
  webSocketImpl?: unknown;
  /** Waits between retries (setTimeout by default): tests give their own to see the delays. */
  sleep?: (ms: number) => Promise<void>;
  /** The retries' jitter, in [0, 1) (Math.random by default). */
  random?: () => number;
}

export const DEFAULT_MAX_RETRIES = 2;
/**
 * A confirm may call up to 1 + maxRetries (at most 5) processors in turn, each for up to CONNECTOR_TIMEOUT_MS
 * (15 s by default): 90 s, plus the service's own work (docs/server-sdk.md, "Timeouts"). Stripe's library's
 * 80 s would cut the longest, and the caller would then not know whether the payment was made.
 */
export const DEFAULT_TIMEOUT_MS = 100_000;

type Filter<Variables> = Omit<Variables, 'after'>;

interface Connection<Node> {
  edges: { node: Node }[];
  pageInfo: { endCursor?: string | null; hasNextPage: boolean };
}

/** Every node of a cursor-paginated query, page after page, as one async iteration. */
async function* everyNode<Field extends string, Node, Variables>(
  transport: Transport,
  document: Document<Record<Field, Connection<Node>>, Variables & { after?: string | null }>,
  field: Field,
  variables: Variables,
): AsyncGenerator<Node> {
  let after: string | null = null;
  do {
    const connection: Connection<Node> = (await transport.request(document, { ...variables, after }))[field];
    for (const edge of connection.edges) yield edge.node;
    after = connection.pageInfo.hasNextPage ? (connection.pageInfo.endCursor ?? null) : null;
  } while (after !== null);
}

/** A list the API answers in one page (no cursor), iterated like the paginated ones. */
async function* everyItem<Item>(items: Promise<Item[]>): AsyncGenerator<Item> {
  yield* await items;
}

export class Payments {
  readonly #transport: Transport;

  constructor(options: PaymentsOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required: the merchant’s secret key (sk_test_… or sk_live_…).');
    if (!options.baseUrl) throw new TypeError('baseUrl is required: the service’s URL, such as https://pay.example.com.');
    assertKeySafeBaseUrl(options.baseUrl, 'baseUrl');
    this.#transport = createTransport({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      idempotencyKeys: true,
      // Node 20 has no global WebSocket (Node 22 has); `ws` is this package's dependency for it.
      webSocketImpl: options.webSocketImpl ?? (globalThis as { WebSocket?: unknown }).WebSocket ?? WebSocket,
      ...(options.sleep ? { sleep: options.sleep } : {}),
      ...(options.random ? { random: options.random } : {}),
    });
  }

  /** Closes the WebSocket of updates() and live() if one was opened. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  readonly payments = {
    create: async (input: CreatePaymentInput, options?: RequestOptions): Promise<Payment> =>
      (await this.#transport.request(SdkNodeCreatePaymentDocument, { input }, options)).createPayment,
    retrieve: async (id: string): Promise<Payment> => (await this.#transport.request(SdkNodePaymentDocument, { id })).payment,
    /**
     * Confirms with the secret key: the API asks for the payment's client secret (ConfirmPaymentInput), taken
     * from `payment` when given, or read once from the payment `id`.
     */
    confirm: async (payment: string | { id: string; clientSecret: string }, input: ConfirmPaymentParams, options?: RequestOptions): Promise<Payment> => {
      const { clientSecret } = typeof payment === 'string' ? await this.payments.retrieve(payment) : payment;
      return (await this.#transport.request(SdkNodeConfirmPaymentDocument, { input: { ...input, clientSecret } }, options)).confirmPayment;
    },
    capture: async (paymentId: string, params: { amountToCapture?: number } = {}, options?: RequestOptions): Promise<Payment> =>
      (await this.#transport.request(SdkNodeCapturePaymentDocument, { input: { ...params, paymentId } }, options)).capturePayment,
    cancel: async (paymentId: string, params: { cancellationReason?: string } = {}, options?: RequestOptions): Promise<Payment> =>
      (await this.#transport.request(SdkNodeCancelPaymentDocument, { input: { ...params, paymentId } }, options)).cancelPayment,
    /** Voids a SUCCEEDED payment at the processor (where it supports that): no refund, no dispute (CANCELLED_POST_CAPTURE). */
    cancelPostCapture: async (paymentId: string, params: { cancellationReason?: string } = {}, options?: RequestOptions): Promise<Payment> =>
      (await this.#transport.request(SdkNodeCancelPaymentPostCaptureDocument, { input: { ...params, paymentId } }, options)).cancelPaymentPostCapture,
    /** Asks the processor for the payment's current state. */
    sync: async (paymentId: string, options?: RequestOptions): Promise<Payment> =>
      (await this.#transport.request(SdkNodeSyncPaymentDocument, { input: { paymentId } }, options)).syncPayment,
    /** The merchant's payments in the key's mode, newest first, following the cursors (`first` is the page size). */
    list: (filter: Filter<SdkNodePaymentsQueryVariables> = {}): AsyncIterable<Payment> =>
      everyNode(this.#transport, SdkNodePaymentsDocument, 'payments', filter),
    /** The payment each time a change of it commits, in order, until the loop breaks (live only: retrieve() first for now). */
    updates: (paymentId: string): AsyncIterable<Payment> =>
      mapIterable(this.#transport.iterate(SdkNodePaymentUpdatedDocument, { paymentId }), (data) => data.paymentUpdated),
  };

  readonly refunds = {
    create: async (input: CreateRefundInput, options?: RequestOptions): Promise<Refund> =>
      (await this.#transport.request(SdkNodeCreateRefundDocument, { input }, options)).createRefund,
    retrieve: async (id: string): Promise<Refund> => (await this.#transport.request(SdkNodeRefundDocument, { id })).refund,
    sync: async (refundId: string, options?: RequestOptions): Promise<Refund> =>
      (await this.#transport.request(SdkNodeSyncRefundDocument, { input: { refundId } }, options)).syncRefund,
    /** A payment's refunds, oldest first. */
    list: (filter: { paymentId: string }): AsyncIterable<Refund> =>
      everyItem(this.#transport.request(SdkNodeRefundsDocument, filter).then((data) => data.refunds)),
  };

  readonly merchant = {
    /** The merchant of the key: its id is what webhooks' `merchant_id` names (docs/webhooks.md). */
    retrieve: async () => (await this.#transport.request(SdkNodeMerchantDocument, {})).merchant,
  };

  readonly businessProfiles = {
    /** The merchant's business profiles, with the settings of the key's mode (events.live takes a profile's id). */
    list: (): AsyncIterable<BusinessProfile> => everyItem(this.#transport.request(SdkNodeBusinessProfilesDocument, {}).then((data) => data.businessProfiles)),
  };

  readonly customers = {
    /** A customer (the id the merchant gave payments' `customerId`) with its saved cards. */
    retrieve: async (id: string) => (await this.#transport.request(SdkNodeCustomerDocument, { id })).customer,
  };

  readonly paymentLinks = {
    create: async (input: CreatePaymentLinkInput, options?: RequestOptions): Promise<PaymentLink> =>
      (await this.#transport.request(SdkNodeCreatePaymentLinkDocument, { input }, options)).createPaymentLink,
    retrieve: async (id: string): Promise<PaymentLink> => (await this.#transport.request(SdkNodePaymentLinkDocument, { id })).paymentLink,
    deactivate: async (paymentLinkId: string, options?: RequestOptions): Promise<PaymentLink> =>
      (await this.#transport.request(SdkNodeDeactivatePaymentLinkDocument, { input: { paymentLinkId } }, options)).deactivatePaymentLink,
  };

  readonly disputes = {
    retrieve: async (id: string): Promise<Dispute> => (await this.#transport.request(SdkNodeDisputeDocument, { id })).dispute,
    /** The merchant's disputes, newest first: one page of at most `first` (100; 20 by default). */
    list: (filter: SdkNodeDisputesQueryVariables = {}): AsyncIterable<Dispute> =>
      everyItem(this.#transport.request(SdkNodeDisputesDocument, filter).then((data) => data.disputes)),
    accept: async (disputeId: string, options?: RequestOptions): Promise<Dispute> =>
      (await this.#transport.request(SdkNodeAcceptDisputeDocument, { input: { disputeId } }, options)).acceptDispute,
    challenge: async (disputeId: string, evidence: Record<string, unknown>, options?: RequestOptions): Promise<Dispute> =>
      (await this.#transport.request(SdkNodeChallengeDisputeDocument, { input: { disputeId, evidence } }, options)).challengeDispute,
  };

  readonly payouts = {
    create: async (input: CreatePayoutInput, options?: RequestOptions): Promise<Payout> =>
      (await this.#transport.request(SdkNodeCreatePayoutDocument, { input }, options)).createPayout,
    retrieve: async (id: string): Promise<Payout> => (await this.#transport.request(SdkNodePayoutDocument, { id })).payout,
    cancel: async (payoutId: string, options?: RequestOptions): Promise<Payout> =>
      (await this.#transport.request(SdkNodeCancelPayoutDocument, { input: { payoutId } }, options)).cancelPayout,
    /** The merchant's payouts, newest first: one page of at most `first` (100; 20 by default). */
    list: (filter: SdkNodePayoutsQueryVariables = {}): AsyncIterable<Payout> =>
      everyItem(this.#transport.request(SdkNodePayoutsDocument, filter).then((data) => data.payouts)),
  };

  readonly events = {
    retrieve: async (id: string): Promise<Event> => (await this.#transport.request(SdkNodeEventDocument, { id })).event,
    /** The merchant's events, newest first, following the cursors. */
    list: (filter: Filter<SdkNodeEventsQueryVariables> = {}): AsyncIterable<Event> => everyNode(this.#transport, SdkNodeEventsDocument, 'events', filter),
    /** Sends the event to the webhook endpoint again now (a new delivery attempt of the same body). */
    retry: async (eventId: string, options?: RequestOptions): Promise<Event> =>
      (await this.#transport.request(SdkNodeRetryWebhookDeliveryDocument, { input: { eventId } }, options)).retryWebhookDelivery,
    /** Every event of the profile as it is created; with `after` (an event id), first those since it, without gaps or repeats. */
    live: (filter: SdkNodePaymentEventsSubscriptionVariables): AsyncIterable<Event> =>
      mapIterable(this.#transport.iterate(SdkNodePaymentEventsDocument, filter), (data) => data.paymentEvents),
  };
}

/** `source`'s items through `map`; ending the loop ends `source` (closing its subscription). */
async function* mapIterable<From, To>(source: AsyncIterable<From>, map: (item: From) => To): AsyncGenerator<To> {
  for await (const item of source) yield map(item);
}
