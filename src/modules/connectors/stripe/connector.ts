// The Stripe connector: PaymentIntents confirmed at once (docs.stripe.com/api/payment_intents), refunds,
// disputes and webhook endpoints, through Stripe's official Node library, which encodes requests as Stripe
// expects and can be aimed (STRIPE_API_BASE) at a proxy or a local fake. Our attempt or refund id is the
// call's Idempotency-Key (with a suffix for the calls made before it: a card's Customer, a CVC token) and the
// object's metadata.reference. Its wire format is in wire.ts, how its answers read as ours in status-map.ts
// and decline-map.ts, its callbacks in callbacks.ts.
import Stripe from 'stripe';
import { z } from 'zod';
import type { Mode } from '../../../kernel/api-keys.ts';
import {
  ConnectorError,
  type AuthorizeRequest,
  type CapturedPayment,
  type Connector,
  type ConnectorWebhooks,
  type ProcessorDispute,
  type ProcessorPayment,
  type ProcessorRefund,
  type RefundRequest,
  singleEvent,
  unsafeCurrencyRefusal,
} from '../port.ts';
import { WithoutPayoutsOrSessions } from '../not-supported.ts';
import { parseStripeCallback, SIGNATURE_HEADER, verifyStripeSignature } from './callbacks.ts';
import { connectorErrorOf } from './decline-map.ts';
import { toProcessorDispute, toProcessorPayment, toProcessorRefund } from './status-map.ts';
import {
  customerSchema,
  cvcTokenSchema,
  destinationCharge,
  EXPAND_SETTLEMENT,
  disputeSchema,
  ENABLED_EVENTS,
  methodRefusal,
  paymentIntentSchema,
  paymentMethodData,
  refundOfDestinationCharge,
  refundSchema,
  savedCardIds,
  unsupported,
  webhookEndpointSchema,
  type IdealBank,
} from './wire.ts';

export const stripeCredentialsSchema = z.object({
  apiKey: z.string().regex(/^sk_(test|live)_[A-Za-z0-9]{10,255}$/, 'must be a Stripe secret key: sk_test_… or sk_live_…'),
});
export type StripeCredentials = z.infer<typeof stripeCredentialsSchema>;

/** The mode a key works in: a test-mode account takes test keys only, a live one live keys. */
export const stripeKeyMode = (credentials: StripeCredentials): Mode => (credentials.apiKey.startsWith('sk_live_') ? 'LIVE' : 'TEST');

/** The literal members of one of the library's open string unions (`'a' | 'b' | OtherString`). */
type KnownValues<Union> = Union extends unknown ? (string extends Union ? never : Union) : never;
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// wire.ts's IDEAL_BANKS are exactly the banks the library types for iDEAL: adding or dropping one fails to compile.
true satisfies Exactly<IdealBank, KnownValues<Stripe.PaymentIntentCreateParams.PaymentMethodData.Ideal.Bank>>;

export class StripeConnector extends WithoutPayoutsOrSessions implements Connector {
  readonly name = 'stripe';
  readonly webhooks: ConnectorWebhooks;
  readonly #stripe: Stripe;

  constructor(
    credentials: StripeCredentials,
    private readonly options: { apiBase: string; timeoutMs: number },
  ) {
    super();
    const base = new URL(options.apiBase);
    this.#stripe = new Stripe(credentials.apiKey, {
      host: base.hostname,
      port: base.port || (base.protocol === 'http:' ? 80 : 443),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
      // Our services decide what is retried, and how (an unknown outcome is synced, never sent again blind).
      maxNetworkRetries: 0,
      timeout: options.timeoutMs,
      telemetry: false,
    });
    this.webhooks = {
      verify: (rawBody, headers, secret, now) => verifyStripeSignature(rawBody, headers[SIGNATURE_HEADER], secret, now),
      parse: (rawBody) => singleEvent(parseStripeCallback(rawBody)),
      // Stripe makes the endpoint's signing secret itself: it replaces the one we offered.
      register: async (url) => {
        const endpoint = await this.read(webhookEndpointSchema, () =>
          this.#stripe.webhookEndpoints.create({
            url,
            enabled_events: [...ENABLED_EVENTS],
            description: 'Payments orchestrator callbacks',
            // Events are shaped by the endpoint's API version, else by the account's default, which may be any:
            // the version the library is pinned to is the one wire.ts reads its objects as.
            api_version: Stripe.API_VERSION,
          }),
        );
        return { endpointId: endpoint.id, secret: endpoint.secret };
      },
    };
  }

  async authorize(request: AuthorizeRequest): Promise<ProcessorPayment> {
    const refused = unsafeCurrencyRefusal('Stripe', request.currency) ?? methodRefusal(request);
    if (refused) throw refused;
    const params: Stripe.PaymentIntentCreateParams = {
      amount: request.amount,
      currency: request.currency.toLowerCase(),
      confirm: true,
      capture_method: request.captureMethod === 'MANUAL' ? 'manual' : 'automatic',
      ...(await this.paidWith(request)),
      return_url: request.returnUrl,
      metadata: { reference: request.reference },
      ...destinationCharge(request.split),
      expand: [EXPAND_SETTLEMENT],
    };
    return this.payment(() => this.#stripe.paymentIntents.create(params, { idempotencyKey: request.reference }));
  }

  /**
   * What the intent is paid with (docs.stripe.com/payments/save-during-payment): a new method's details, its card set
   * up for off-session use with a Customer of its own when asked to save it; or a saved card with its Customer, off
   * session when no CVC came (a merchant-initiated payment under a mandate: Stripe declines `authentication_required`
   * if the bank asks for the customer), else with the CVC the customer typed again as a cvc_update token.
   */
  private async paidWith(request: AuthorizeRequest): Promise<Partial<Stripe.PaymentIntentCreateParams>> {
    const method = request.paymentMethod;
    const card = { request_three_d_secure: request.threeDs ? ('any' as const) : ('automatic' as const) };
    if (method.type === 'saved_card') {
      const { customer, paymentMethod } = savedCardIds(method.token);
      const { cvc } = method;
      if (cvc === null) return { customer, payment_method: paymentMethod, off_session: true };
      const cvcToken = await this.readBeforeCharging(cvcTokenSchema, () =>
        this.#stripe.tokens.create({ cvc_update: { cvc } }, { idempotencyKey: `${request.reference}.cvc` }),
      );
      return { customer, payment_method: paymentMethod, payment_method_options: { card: { ...card, cvc_token: cvcToken.id } } };
    }
    if (request.saveCard && method.type !== 'card') throw unsupported(`saving ${method.type} methods`);
    const newMethod = {
      payment_method_data: paymentMethodData(method) as Stripe.PaymentIntentCreateParams.PaymentMethodData,
      ...(method.type === 'card' ? { payment_method_options: { card } } : {}),
    };
    if (!request.saveCard) return newMethod;
    // One Customer per saved card: the payment's own, made once whatever the retries (its key is the attempt's).
    const customer = await this.readBeforeCharging(customerSchema, () =>
      this.#stripe.customers.create({ metadata: { reference: request.reference } }, { idempotencyKey: `${request.reference}.customer` }),
    );
    return { ...newMethod, customer: customer.id, setup_future_usage: 'off_session' };
  }

  /**
   * A partial capture of a destination charge takes the fee of what it captures (docs/connectors/stripe.md): the
   * connected account is transferred the capture less the fee, its share of the capture as the ledger's.
   */
  capture(transactionId: string, amount: number, idempotencyKey: string, payment: CapturedPayment) {
    // A fee of 0 is not sent (Stripe documents none): a capture so small the platform's share rounds to nothing keeps the
    // authorization's fee, if it had one (docs/connectors/stripe.md).
    const fee = payment.split === undefined || payment.split.platformAmount === 0 ? {} : { application_fee_amount: payment.split.platformAmount };
    return this.payment(() =>
      this.#stripe.paymentIntents.capture(transactionId, { amount_to_capture: amount, ...fee, expand: [EXPAND_SETTLEMENT] }, { idempotencyKey }),
    );
  }

  void(transactionId: string, idempotencyKey: string) {
    return this.payment(() => this.#stripe.paymentIntents.cancel(transactionId, {}, { idempotencyKey }));
  }

  sync(transactionId: string) {
    return this.payment(() => this.#stripe.paymentIntents.retrieve(transactionId, { expand: [EXPAND_SETTLEMENT] }));
  }

  /**
   * By Stripe's search on metadata (docs.stripe.com/search). Search is not read-after-write and its delay has no
   * bound during Stripe's incidents, so finding nothing proves nothing: it is an unknown outcome, never "no such
   * payment" (which would fail an attempt Stripe may have charged). The payment stays waiting; Stripe's
   * payment_intent.* webhooks carry the reference, and the sync schedule asks again.
   */
  async findByReference(reference: string): Promise<ProcessorPayment | null> {
    const found = await this.read(z.object({ data: z.array(paymentIntentSchema) }), () =>
      this.#stripe.paymentIntents.search({
        query: `metadata['reference']:'${reference.replace(/[^A-Za-z0-9_]/g, '')}'`,
        limit: 1,
        expand: [`data.${EXPAND_SETTLEMENT}`],
      }),
    );
    if (found.data[0] === undefined) throw notConclusive('payment', reference);
    return toProcessorPayment(found.data[0]);
  }

  async refund(request: RefundRequest): Promise<ProcessorRefund> {
    const params: Stripe.RefundCreateParams = {
      payment_intent: request.transactionId,
      amount: request.amount,
      metadata: { reference: request.reference, ...(request.reason ? { reason: request.reason } : {}) },
      ...refundOfDestinationCharge(request.split),
    };
    return toProcessorRefund(await this.read(refundSchema, () => this.#stripe.refunds.create(params, { idempotencyKey: request.reference })));
  }

  async syncRefund(refundId: string): Promise<ProcessorRefund> {
    return toProcessorRefund(await this.read(refundSchema, () => this.#stripe.refunds.retrieve(refundId)));
  }

  /**
   * Among the payment's refunds (Stripe cannot search refunds, but lists a payment's: a few, every page read), the
   * one whose metadata names `reference`. Not finding it proves nothing: the call whose answer was lost may still be
   * running at Stripe and create it after this listing, so it is an unknown outcome and the refund keeps waiting
   * (Stripe's refund.* webhooks carry the reference, and the sync schedule asks again).
   */
  async findRefundByReference(reference: string, transactionId: string): Promise<ProcessorRefund | null> {
    const refund = await this.read(refundSchema.nullable(), async () => {
      for await (const candidate of this.#stripe.refunds.list({ payment_intent: transactionId, limit: 100 })) {
        if (candidate.metadata?.reference === reference) return candidate;
      }
      return null;
    });
    if (refund === null) throw notConclusive('refund', reference);
    return toProcessorRefund(refund);
  }

  /** Closes the dispute: Stripe reports it `lost`, read as conceded (status-map.ts). */
  async acceptDispute(disputeId: string, idempotencyKey: string): Promise<ProcessorDispute> {
    return toProcessorDispute(await this.read(disputeSchema, () => this.#stripe.disputes.close(disputeId, {}, { idempotencyKey })), unixNow());
  }

  /** Evidence fields are Stripe's own (docs.stripe.com/api/disputes/update#update_dispute-evidence); submitted at once. */
  async submitDisputeEvidence(disputeId: string, evidence: Record<string, string>, idempotencyKey: string): Promise<ProcessorDispute> {
    const dispute = await this.read(disputeSchema, () => this.#stripe.disputes.update(disputeId, { evidence, submit: true }, { idempotencyKey }));
    return toProcessorDispute(dispute, unixNow());
  }

  /** A call answering with an intent; a decline is Stripe's 402 card error carrying it: an answer too. */
  private async payment(call: () => Promise<unknown>): Promise<ProcessorPayment> {
    const intentOrDecline = () =>
      call().catch((error: unknown) => {
        if (error instanceof Stripe.errors.StripeCardError && error.payment_intent) return error.payment_intent;
        throw error;
      });
    return toProcessorPayment(await this.read(paymentIntentSchema, intentOrDecline));
  }

  /**
   * A call made before the PaymentIntent's (a Customer, a CVC token): whatever became of it, nothing was charged, so
   * its failure is never an unknown outcome (which would leave the payment waiting for an intent that never was).
   */
  private async readBeforeCharging<T>(schema: z.ZodType<T>, call: () => Promise<unknown>): Promise<T> {
    try {
      return await this.read(schema, call);
    } catch (error) {
      if (!(error instanceof ConnectorError) || !error.outcomeUnknown) throw error;
      const { processorCode, declineCode, httpStatus, processorBody } = error;
      throw new ConnectorError(error.message, error.kind, false, { processorCode, declineCode, httpStatus, body: processorBody });
    }
  }

  /** The library's answer, read with `schema`; its errors as ConnectorErrors (decline-map.ts). */
  private async read<T>(schema: z.ZodType<T>, call: () => Promise<unknown>): Promise<T> {
    let answer: unknown;
    try {
      answer = await call();
    } catch (error) {
      throw connectorErrorOf(error, this.options.timeoutMs);
    }
    const parsed = schema.safeParse(answer);
    // It answered "done" in a shape we cannot read: whatever it did, it did; sync will tell.
    if (!parsed.success) throw new ConnectorError('stripe answered with a body that is not the object asked for', 'bad_response', true);
    return parsed.data;
  }
}

const unixNow = () => Math.floor(Date.now() / 1000);

/** Stripe cannot prove a resource absent by our reference: the caller keeps waiting rather than fail it. */
function notConclusive(resource: 'payment' | 'refund', reference: string): ConnectorError {
  return new ConnectorError(`Stripe found no ${resource} with reference ${reference} yet, which does not prove there is none`, 'bad_response', true, {
    processorCode: 'not_found_yet',
  });
}
