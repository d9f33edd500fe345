// Medusa's payment provider for the payments orchestrator: Medusa's payment module calls these methods
// (docs/medusa.md), and each one calls our API through the server SDK.
import type {
  AuthorizePaymentInput,
  AuthorizePaymentOutput,
  CancelPaymentInput,
  CancelPaymentOutput,
  CapturePaymentInput,
  CapturePaymentOutput,
  DeletePaymentInput,
  DeletePaymentOutput,
  GetPaymentStatusInput,
  GetPaymentStatusOutput,
  InitiatePaymentInput,
  InitiatePaymentOutput,
  ProviderWebhookPayload,
  RefundPaymentInput,
  RefundPaymentOutput,
  RetrievePaymentInput,
  RetrievePaymentOutput,
  UpdatePaymentInput,
  UpdatePaymentOutput,
  WebhookActionResult,
} from '@medusajs/framework/types';
import { AbstractPaymentProvider, MedusaError, PaymentActions } from '@medusajs/framework/utils';
import { InvalidStateError, Payments, webhooks, type Payment, type WebhookHeaders } from '@payments-orchestrator/node';
import { fromMinorUnits, toMinorUnits } from './amounts.ts';
import { medusaErrorOf } from './errors.ts';
import { SESSION_STATUS_OF, WEBHOOK_ACTION_OF, type OrchestratorPaymentStatus } from './statuses.ts';

export interface PaymentsOrchestratorOptions {
  /** A secret key of the merchant (`sk_test_…` or `sk_live_…`). */
  apiKey: string;
  /** Where the API is (`https://payments.example`). */
  baseUrl: string;
  /** The business profile's webhook signing key (`payment_response_hash_key`) of the key's mode. */
  webhookKey: string;
  /** true: payments are captured when authorized; false (default): authorized, and captured when Medusa captures. */
  capture?: boolean;
  /** Where our 3D Secure and redirect pages send the customer back to (the storefront's checkout page). */
  returnUrl?: string;
  /** The business profile (`pro_…`) whose payments this store's are: webhooks of other profiles are ignored. */
  profileId?: string;
}

/** The metadata key of our payment that names Medusa's payment session, so webhooks find their session. */
export const SESSION_ID_METADATA_KEY = 'medusa_session_id';

/**
 * What the provider keeps of our payment in Medusa's session and payment `data` (amounts in minor units, as
 * our API has them). The storefront reads `client_secret` to confirm with the browser SDK, and `next_action`
 * when the status is requires_more.
 */
export interface PaymentsOrchestratorData extends Record<string, unknown> {
  id: string;
  client_secret: string;
  status: OrchestratorPaymentStatus;
  amount: number;
  currency: string;
  amount_capturable: number;
  amount_received: number;
  amount_refunded: number;
  capture_method: string;
  next_action: { type: string; redirect_to_url: string; instructions: unknown } | null;
  error_code: string | null;
  error_message: string | null;
}

/** Statuses where the payment waits on the customer or the processor, so authorize asks the processor first. */
const WAITING: ReadonlySet<OrchestratorPaymentStatus> = new Set(['REQUIRES_CUSTOMER_ACTION', 'PROCESSING']);
/** Statuses from which a payment's amount may still change: nothing was sent to a processor that holds it. */
const NOT_CONFIRMED: ReadonlySet<OrchestratorPaymentStatus> = new Set(['REQUIRES_PAYMENT_METHOD', 'REQUIRES_CONFIRMATION']);
/** The cancellation reason of a payment updatePayment replaced, by which a retried update knows its own work. */
const REPLACED = 'amount changed: replaced by a new payment';
/** Statuses after which nothing is left to cancel. */
const ENDED: ReadonlySet<OrchestratorPaymentStatus> = new Set(['CANCELLED', 'CANCELLED_POST_CAPTURE', 'FAILED', 'EXPIRED']);

function dataOf(payment: Payment): PaymentsOrchestratorData {
  return {
    id: payment.id,
    client_secret: payment.clientSecret,
    status: payment.status as OrchestratorPaymentStatus,
    amount: payment.amount,
    currency: payment.currency,
    amount_capturable: payment.amountCapturable,
    amount_received: payment.amountReceived,
    amount_refunded: payment.amountRefunded,
    capture_method: String(payment.captureMethod).toLowerCase(),
    next_action: payment.nextAction
      ? { type: payment.nextAction.type, redirect_to_url: payment.nextAction.redirectToUrl, instructions: payment.nextAction.instructions ?? null }
      : null,
    error_code: payment.errorCode ?? null,
    error_message: payment.errorMessage ?? null,
  };
}

const withStatus = (payment: Payment) => ({ status: SESSION_STATUS_OF[payment.status as OrchestratorPaymentStatus], data: dataOf(payment) });

function paymentIdOf(data: Record<string, unknown> | undefined, method: string): string {
  const id = data?.['id'];
  if (typeof id !== 'string' || !id.startsWith('pay_')) {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, `${method}: data.id must be the payments API's payment id (pay_…), got ${String(id)}`);
  }
  return id;
}

/** Medusa's idempotency key as the SDK's option: none lets the SDK make one per call (reused by its retries). */
const keyed = (context: { idempotency_key?: string } | undefined) => (context?.idempotency_key ? { idempotencyKey: context.idempotency_key } : {});

export class PaymentsOrchestratorProviderService extends AbstractPaymentProvider<PaymentsOrchestratorOptions> {
  static override identifier = 'payments-orchestrator';

  private readonly payments: Payments;
  /** The key's merchant id, asked of the API once (the first webhook), to tell our events from others'. */
  private merchantIdRead: Promise<string> | null = null;

  static override validateOptions(options: Record<string, unknown>): void {
    for (const name of ['apiKey', 'baseUrl', 'webhookKey'] as const) {
      if (typeof options[name] !== 'string' || options[name] === '') {
        throw new MedusaError(MedusaError.Types.INVALID_DATA, `payments-orchestrator option ${name}: required, a non-empty string`);
      }
    }
    if (!/^sk_(test|live)_/.test(options['apiKey'] as string)) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, 'payments-orchestrator option apiKey: must be a secret key (sk_test_… or sk_live_…)');
    }
    if (!URL.canParse(options['baseUrl'] as string)) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, 'payments-orchestrator option baseUrl: must be an absolute URL');
    }
    if (options['profileId'] !== undefined && (typeof options['profileId'] !== 'string' || !options['profileId'].startsWith('pro_'))) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, 'payments-orchestrator option profileId: must be a business profile id (pro_…)');
    }
    if (options['capture'] !== undefined && typeof options['capture'] !== 'boolean') {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, 'payments-orchestrator option capture: must be true or false');
    }
  }

  constructor(cradle: Record<string, unknown>, options: PaymentsOrchestratorOptions) {
    super(cradle, options);
    PaymentsOrchestratorProviderService.validateOptions(options as unknown as Record<string, unknown>);
    this.payments = new Payments({ apiKey: options.apiKey, baseUrl: options.baseUrl });
  }

  async initiatePayment({ amount, currency_code, data, context }: InitiatePaymentInput): Promise<InitiatePaymentOutput> {
    const sessionId = data?.['session_id'];
    if (typeof sessionId !== 'string') {
      throw new MedusaError(
        MedusaError.Types.INVALID_DATA,
        "initiatePayment: data.session_id must be the payment session's id (Medusa's payment module sets it)",
      );
    }
    const payment = await this.createPayment(amount, currency_code, sessionId, keyed(context));
    return { id: payment.id, ...withStatus(payment) };
  }

  private createPayment(amount: InitiatePaymentInput['amount'], currencyCode: string, sessionId: string, options: { idempotencyKey?: string }) {
    return this.payments.payments.create(
      {
        amount: toMinorUnits(amount, currencyCode),
        currency: currencyCode.toUpperCase(),
        captureMethod: this.config.capture ? 'AUTOMATIC' : 'MANUAL',
        metadata: { [SESSION_ID_METADATA_KEY]: sessionId },
        ...(this.config.returnUrl ? { returnUrl: this.config.returnUrl } : {}),
      },
      options,
    );
  }

  /**
   * The storefront confirms the payment with the browser SDK and its client secret (card data never reaches
   * Medusa), so authorizing reads where the payment is; one that waits on the customer or the processor is
   * synced first, so a challenge completed at the processor counts even if the customer never came back.
   */
  async authorizePayment({ data }: AuthorizePaymentInput): Promise<AuthorizePaymentOutput> {
    const id = paymentIdOf(data, 'authorizePayment');
    const payment = await this.payments.payments.retrieve(id);
    return withStatus(WAITING.has(payment.status as OrchestratorPaymentStatus) ? await this.payments.payments.sync(id) : payment);
  }

  async capturePayment({ data, context }: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const id = paymentIdOf(data, 'capturePayment');
    try {
      return { data: dataOf(await this.payments.payments.capture(id, {}, keyed(context))) };
    } catch (error) {
      // Captured in full already (automatic capture, a capture made in our dashboard, or one whose answer
      // Medusa missed): nothing is left to capture, and Medusa records the amount it asked for. A partial
      // capture made elsewhere is not that: Medusa would record more than was received.
      const payment = await this.settledBy(error, id, 'SUCCEEDED', 'PARTIALLY_CAPTURED');
      if (payment.status === 'PARTIALLY_CAPTURED') {
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `capturePayment: payment ${id} was partially captured outside Medusa (${fromMinorUnits(payment.amountReceived, payment.currency)} of ` +
            `${fromMinorUnits(payment.amount, payment.currency)} ${payment.currency} received) and cannot be captured again`,
        );
      }
      return { data: dataOf(payment) };
    }
  }

  async cancelPayment({ data, context }: CancelPaymentInput): Promise<CancelPaymentOutput> {
    if (typeof data?.['id'] !== 'string') return { data: data ?? {} };
    const id = paymentIdOf(data, 'cancelPayment');
    try {
      return { data: dataOf(await this.payments.payments.cancel(id, {}, keyed(context))) };
    } catch (error) {
      const payment = await this.settledBy(error, id, ...ENDED);
      return { data: dataOf(payment) };
    }
  }

  /** As Medusa's Stripe provider does: a deleted session's payment is cancelled, if anything is left to cancel. */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    return this.cancelPayment(input);
  }

  private ourMerchantId(): Promise<string> {
    // A failed read is not kept: the next webhook asks again.
    const read = (this.merchantIdRead ??= this.payments.merchant.retrieve().then(
      ({ id }) => id,
      (error: unknown) => {
        this.merchantIdRead = null;
        throw error;
      },
    ));
    return read;
  }

  /** Rethrows `error` unless it is INVALID_STATE and the payment is now in one of `statuses`; returns the payment. */
  private async settledBy(error: unknown, id: string, ...statuses: OrchestratorPaymentStatus[]): Promise<Payment> {
    if (!(error instanceof InvalidStateError)) throw error;
    const payment = await this.payments.payments.retrieve(id);
    if (!statuses.includes(payment.status as OrchestratorPaymentStatus)) throw error;
    return payment;
  }

  async refundPayment({ amount, data, context }: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const id = paymentIdOf(data, 'refundPayment');
    const currency = data?.['currency'];
    if (typeof currency !== 'string') throw new MedusaError(MedusaError.Types.INVALID_DATA, 'refundPayment: data.currency is missing');
    const refund = await this.payments.refunds.create({ paymentId: id, amount: toMinorUnits(amount, currency) }, keyed(context));
    // Our createRefund answers a refund the processor refused as FAILED rather than an error: throwing makes
    // Medusa drop the refund it recorded before calling us (docs/medusa.md, "The flow").
    if (refund.status === 'FAILED') {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `refundPayment: the processor refused refund ${refund.id} of payment ${id}: ${refund.errorMessage ?? refund.errorCode ?? 'no reason given'}`,
        refund.errorCode ?? undefined,
      );
    }
    return { data: { ...dataOf(await this.payments.payments.retrieve(id)), refund_id: refund.id, refund_status: refund.status } };
  }

  async retrievePayment({ data }: RetrievePaymentInput): Promise<RetrievePaymentOutput> {
    return { data: dataOf(await this.payments.payments.retrieve(paymentIdOf(data, 'retrievePayment'))) };
  }

  async getPaymentStatus({ data }: GetPaymentStatusInput): Promise<GetPaymentStatusOutput> {
    return withStatus(await this.payments.payments.retrieve(paymentIdOf(data, 'getPaymentStatus')));
  }

  /**
   * Our API has no mutation that changes a payment's amount. Before the customer confirmed (nothing is held
   * at a processor), a new amount or currency creates another payment for the same session and cancels the old one:
   * the session's data then has a new id and client secret, which the storefront must use. After that, the
   * amount cannot change (Medusa's storefronts start a new session instead).
   */
  async updatePayment({ amount, currency_code, data }: UpdatePaymentInput): Promise<UpdatePaymentOutput> {
    const id = paymentIdOf(data, 'updatePayment');
    const current = await this.payments.payments.retrieve(id);
    if (current.amount === toMinorUnits(amount, currency_code) && current.currency === currency_code.toUpperCase()) return withStatus(current);
    const replacedAlready = current.status === 'CANCELLED' && current.cancellationReason === REPLACED;
    if (!NOT_CONFIRMED.has(current.status as OrchestratorPaymentStatus) && !replacedAlready) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `updatePayment: payment ${id} is ${current.status}, so its amount can no longer change; start a new payment session`,
      );
    }
    const sessionId = (current.metadata as Record<string, unknown> | null)?.[SESSION_ID_METADATA_KEY];
    if (typeof sessionId !== 'string') {
      throw new MedusaError(
        MedusaError.Types.INVALID_DATA,
        `updatePayment: payment ${id} has no ${SESSION_ID_METADATA_KEY} in its metadata: this provider did not create it`,
      );
    }
    // The replacement first, under a key of the old payment and the new amount (a retried update gets the same
    // one), then the old one cancelled: the session never points at a cancelled payment without a replacement.
    const minorAmount = toMinorUnits(amount, currency_code);
    const replacement = await this.createPayment(amount, currency_code, sessionId, {
      idempotencyKey: `${id}:amount:${minorAmount}:${currency_code.toUpperCase()}`,
    });
    if (replacedAlready) return withStatus(replacement);
    try {
      await this.payments.payments.cancel(id, { cancellationReason: REPLACED });
    } catch (error) {
      // The old payment moved on meanwhile (the customer confirmed it): it stays the session's, the replacement
      // goes. Any other failure keeps the replacement, which a retried update gets back under its key.
      if (error instanceof InvalidStateError) {
        await this.payments.payments.cancel(replacement.id, { cancellationReason: 'amount changed, but the payment it replaced was confirmed meanwhile' });
      }
      throw error;
    }
    return withStatus(replacement);
  }

  /**
   * Our outgoing webhook (docs/webhooks.md), as Medusa's /hooks/payment/{provider_id} route hands it over:
   * verified against its raw bytes with the profile's signing key, then told to Medusa as an action on the
   * payment session named in the payment's metadata. Events of payments Medusa did not create are not_supported,
   * and so are those of another merchant or profile: a platform's profile also receives its connected merchants'
   * events (docs/platforms.md), whose payments could carry a session id of this store's.
   */
  async getWebhookActionAndData(payload: ProviderWebhookPayload['payload']): Promise<WebhookActionResult> {
    const event = webhooks.verify(payload.rawData, payload.headers as WebhookHeaders, this.config.webhookKey);
    const { event_type: eventType, content } = event;
    const mapping = WEBHOOK_ACTION_OF[eventType];
    if (!mapping || content.type !== 'payment_details') return { action: PaymentActions.NOT_SUPPORTED };
    const merchantId = await this.ourMerchantId();
    const ours =
      event.merchant_id === merchantId &&
      content.object.merchant_id === merchantId &&
      (this.config.profileId === undefined || content.object.profile_id === this.config.profileId);
    if (!ours) return { action: PaymentActions.NOT_SUPPORTED };
    const sessionId = content.object.metadata?.[SESSION_ID_METADATA_KEY];
    if (typeof sessionId !== 'string') return { action: PaymentActions.NOT_SUPPORTED };
    return { action: mapping.action, data: { session_id: sessionId, amount: fromMinorUnits(content.object[mapping.amount], content.object.currency) } };
  }
}

/** The methods Medusa's payment module calls: each answers our API's errors as MedusaErrors (errors.ts). */
const MEDUSA_CALLED = [
  'initiatePayment',
  'authorizePayment',
  'capturePayment',
  'cancelPayment',
  'deletePayment',
  'refundPayment',
  'retrievePayment',
  'getPaymentStatus',
  'updatePayment',
  'getWebhookActionAndData',
] as const satisfies ReadonlyArray<keyof PaymentsOrchestratorProviderService>;
for (const name of MEDUSA_CALLED) {
  const method = PaymentsOrchestratorProviderService.prototype[name] as (this: unknown, input: unknown) => Promise<unknown>;
  Object.defineProperty(PaymentsOrchestratorProviderService.prototype, name, {
    value: async function (this: unknown, input: unknown) {
      try {
        return await method.call(this, input);
      } catch (error) {
        throw medusaErrorOf(error);
      }
    },
  });
}
