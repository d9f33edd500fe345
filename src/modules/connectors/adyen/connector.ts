// The connector for Adyen's Checkout API v71, called with fetch: the official @adyen/api-library (v32) speaks
// v72 and builds its hosts from the environment alone, so it cannot be pointed at ADYEN_CHECKOUT_API_BASE.
// Adyen answers captures, cancels and refunds with "received" and has no API to read a payment or a refund:
// their outcomes come in its notifications (callbacks.ts), and sync says so.
import { createHash } from 'node:crypto';
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
  type RedirectCompletion,
  type RefundRequest,
  unsafeCurrencyRefusal,
} from '../port.ts';
import { callJson, type JsonAnswer } from '../json-http.ts';
import { notSupported, WithoutPayoutsOrSessions } from '../not-supported.ts';
import { ACCEPTED_BODY, parseAdyenNotification, verifyAdyenNotification } from './callbacks.ts';
import { noStatusApi, refusalOf } from './decline-map.ts';
import { toProcessorPayment } from './status-map.ts';
import {
  adyenModificationSchema,
  adyenPaymentResponseSchema,
  CHECKOUT_API_VERSION,
  PARTIAL_CAPTURE_SUFFIX,
  paymentRequest,
  splitItems,
  type AdyenModification,
} from './wire.ts';

export const adyenCredentialsSchema = z.object({
  apiKey: z.string().min(20).max(500),
  merchantAccount: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'must be an Adyen merchant account code'),
  /** The live endpoint's prefix (Customer Area, Developers > API URLs); live accounts only. */
  liveUrlPrefix: z
    .string()
    .regex(/^[a-z0-9-]{1,100}$/, 'must be the prefix of your live endpoint')
    .optional(),
});
export type AdyenCredentials = z.infer<typeof adyenCredentialsSchema>;

/** A live account is reached at its own live URL only (docs/connectors/adyen.md): without its prefix it could take no payment. */
export const adyenMissingCredential = (credentials: AdyenCredentials, mode: Mode) =>
  mode === 'LIVE' && !credentials.liveUrlPrefix
    ? { field: 'liveUrlPrefix', message: 'is required for a live Adyen account (Customer Area, Developers > API URLs)' }
    : null;

/** Where an account's Checkout API is: the configured base for test, the account's own live URL for live. */
export function checkoutBaseUrl(credentials: AdyenCredentials, mode: Mode, testBase: string): string {
  if (mode === 'TEST') return `${testBase.replace(/\/+$/, '')}/${CHECKOUT_API_VERSION}`;
  if (!credentials.liveUrlPrefix) throw new ConnectorError('an Adyen live account needs its liveUrlPrefix', 'unauthorized', false);
  return `https://${credentials.liveUrlPrefix}-checkout-live.adyenpayments.com/checkout/${CHECKOUT_API_VERSION}`;
}

const unsupported = (what: string) => notSupported('adyen', what);

export class AdyenConnector extends WithoutPayoutsOrSessions implements Connector {
  readonly name = 'adyen';
  readonly webhooks: ConnectorWebhooks = {
    verify: (rawBody, _headers, secret) => verifyAdyenNotification(rawBody, secret),
    parse: (rawBody) => parseAdyenNotification(rawBody, { merchantAccount: this.credentials.merchantAccount, live: this.options.mode === 'LIVE' }),
    acknowledgement: ACCEPTED_BODY,
    register: () =>
      Promise.reject(
        new ConnectorError(
          "Adyen's webhooks are set up in its Customer Area (Developers > Webhooks), not through its API; see docs/connectors/adyen.md",
          'rejected',
          false,
        ),
      ),
  };

  constructor(
    private readonly credentials: AdyenCredentials,
    /** `mode`: the account's, which its notifications' `live` must match. */
    private readonly options: { baseUrl: string; timeoutMs: number; mode: Mode },
  ) {
    super();
  }

  async authorize(request: AuthorizeRequest): Promise<ProcessorPayment> {
    const currencyRefused = unsafeCurrencyRefusal('Adyen', request.currency);
    if (currencyRefused) throw currencyRefused;
    const body = paymentRequest(request, this.credentials.merchantAccount);
    const response = await this.read(adyenPaymentResponseSchema, 'the payment', '/payments', request.reference, body);
    return toProcessorPayment(response, request.captureMethod, request.amount, request.reference);
  }

  /** After a redirect, Adyen's `redirectResult` (from the return URL) completes the payment. */
  async completeRedirect({ reference, redirectResult, captureMethod, amount }: RedirectCompletion): Promise<ProcessorPayment> {
    // One key per redirectResult: the same return sent twice is answered once, but another leg (a second challenge,
    // a return after a garbled one) is a call of its own, not the first one's answer again.
    const leg = createHash('sha256').update(redirectResult).digest('hex').slice(0, 16);
    const response = await this.read(adyenPaymentResponseSchema, 'the payment details', '/payments/details', `${reference}_details_${leg}`, {
      details: { redirectResult },
    });
    return toProcessorPayment(response, captureMethod, amount, reference);
  }

  async capture(transactionId: string, amount: number, idempotencyKey: string, payment: CapturedPayment): Promise<ProcessorPayment> {
    // The CAPTURE notification carries the amount captured only: the reference it echoes says whether that is all.
    const reference = amount < payment.charged ? `${idempotencyKey}${PARTIAL_CAPTURE_SUFFIX}` : idempotencyKey;
    const received = await this.modify(transactionId, 'captures', idempotencyKey, {
      reference,
      amount: { value: amount, currency: payment.currency.toUpperCase() },
      // A partial capture is split as the ledger shares it; a full one as the payment was (no splits: Adyen's own).
      ...(payment.split ? { splits: splitItems(payment.split, payment.reference) } : {}),
    });
    return this.awaitingNotification(received);
  }

  async void(transactionId: string, idempotencyKey: string): Promise<ProcessorPayment> {
    return this.awaitingNotification(await this.modify(transactionId, 'cancels', idempotencyKey, {}));
  }

  async sync(): Promise<ProcessorPayment> {
    throw noStatusApi('a payment');
  }

  async findByReference(): Promise<ProcessorPayment | null> {
    throw noStatusApi('a payment');
  }

  async refund(request: RefundRequest): Promise<ProcessorRefund> {
    const received = await this.modify(request.transactionId, 'refunds', request.reference, {
      amount: { value: request.amount, currency: request.currency.toUpperCase() },
      // Each seller's balance account gives back what the ledger takes from it, the platform's the rest.
      ...(request.split ? { splits: splitItems(request.split.refund, request.split.chargeReference) } : {}),
    });
    return { refundId: received.pspReference, status: 'pending', amount: request.amount, error: null };
  }

  async syncRefund(): Promise<ProcessorRefund> {
    throw noStatusApi('a refund');
  }

  async findRefundByReference(): Promise<ProcessorRefund | null> {
    throw noStatusApi('a refund');
  }

  acceptDispute(): Promise<ProcessorDispute> {
    return Promise.reject(unsupported("disputes through the API (Adyen's Disputes API is a separate service)"));
  }

  submitDisputeEvidence(): Promise<ProcessorDispute> {
    return Promise.reject(unsupported("disputes through the API (Adyen's Disputes API is a separate service)"));
  }

  /** A modification Adyen received: the payment is unchanged until its notification. */
  private awaitingNotification(received: AdyenModification): ProcessorPayment {
    return {
      transactionId: received.paymentPspReference,
      status: 'pending',
      amountCapturable: 0,
      amountCaptured: 0,
      nextAction: null,
      paymentMethodToken: null,
      error: null,
    };
  }

  /** A modification of the payment, with `idempotencyKey` as its reference unless `body` names another. */
  private modify(pspReference: string, operation: 'captures' | 'cancels' | 'refunds', idempotencyKey: string, body: Record<string, unknown>) {
    const path = `/payments/${encodeURIComponent(pspReference)}/${operation}`;
    return this.read(adyenModificationSchema, `the ${operation.slice(0, -1)}`, path, idempotencyKey, {
      merchantAccount: this.credentials.merchantAccount,
      reference: idempotencyKey,
      ...body,
    });
  }

  private async read<T>(schema: z.ZodType<T>, what: string, path: string, idempotencyKey: string, body: unknown): Promise<T> {
    const { ok, status, payload } = await this.post(path, idempotencyKey, body);
    if (!ok) throw refusalOf(status, payload, what);
    const answer = schema.safeParse(payload);
    // It answered "done" in a shape we cannot read: whatever it did, it did; its notification will tell.
    if (!answer.success) throw new ConnectorError(`Adyen answered ${what} with a body we cannot read`, 'bad_response', true);
    return answer.data;
  }

  private post(path: string, idempotencyKey: string, body: unknown): Promise<JsonAnswer> {
    return callJson('Adyen', `${this.options.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'x-api-key': this.credentials.apiKey, 'idempotency-key': idempotencyKey },
      body,
      timeoutMs: this.options.timeoutMs,
    });
  }
}
