// The connectors for the project's sandbox processor (src/sandbox), called over HTTP like real processors.
// The sandbox serves two processors that behave differently: "sandbox" (every payment method, wallet
// sessions) at /v1 and "fauxpay" (cards and bank debits only, other card rules) at /fauxpay/v1.
// This file is the HTTP client; the sandbox's wire format is in wire.ts, how its answers read as ours in
// status-map.ts and decline-map.ts, its callbacks in callbacks.ts.
import { z } from 'zod';
import {
  ConnectorError,
  methodTypeOf,
  type AuthorizeRequest,
  type Connector,
  type ConnectorWebhooks,
  type PayoutRequest,
  type ProcessorDispute,
  type ProcessorPayment,
  type ProcessorPayout,
  type ProcessorRefund,
  type RefundRequest,
  type WalletSession,
  singleEvent,
} from '../port.ts';
import { callJson, type JsonAnswer } from '../json-http.ts';
import { parseSandboxCallback, SIGNATURE_HEADER, verifySandboxSignature } from './callbacks.ts';
import { provesNoneExists, refusalOf } from './decline-map.ts';
import { toProcessorDispute, toProcessorPayment, toProcessorPayout, toProcessorRefund } from './status-map.ts';
import {
  destinationFields,
  paymentMethodFields,
  sandboxDisputeSchema,
  sandboxEndpointSchema,
  sandboxPaymentSchema,
  sandboxPayoutSchema,
  sandboxRefundSchema,
  sandboxSessionSchema,
  type SandboxDispute,
  type SandboxPayment,
  type SandboxPayout,
  type SandboxRefund,
} from './wire.ts';

/** One of the sandbox's processors: where it is served and what its keys look like. */
export interface SandboxPersonality {
  name: 'sandbox' | 'fauxpay';
  pathPrefix: '' | '/fauxpay';
  keyPrefix: 'sk_sandbox_' | 'sk_fauxpay_';
  /** Whether it sends callbacks (fauxpay has none: its payments rely on sync). */
  webhooks: boolean;
}

export const credentialsSchemaFor = (personality: SandboxPersonality) =>
  z.object({
    apiKey: z
      .string()
      .regex(
        new RegExp(`^${personality.keyPrefix}[A-Za-z0-9]{8,64}$`),
        `must be a ${personality.name} key: ${personality.keyPrefix} and 8 to 64 letters or digits`,
      ),
  });
export type SandboxCredentials = z.infer<ReturnType<typeof credentialsSchemaFor>>;

export class SandboxConnector implements Connector {
  readonly name: string;
  readonly webhooks?: ConnectorWebhooks;
  readonly #baseUrl: string;

  constructor(
    personality: SandboxPersonality,
    private readonly credentials: SandboxCredentials,
    private readonly options: { baseUrl: string; timeoutMs: number },
  ) {
    this.name = personality.name;
    this.#baseUrl = `${options.baseUrl.replace(/\/+$/, '')}${personality.pathPrefix}`;
    if (personality.webhooks) {
      this.webhooks = {
        verify: (rawBody, headers, secret, now) => verifySandboxSignature(rawBody, headers[SIGNATURE_HEADER], secret, now),
        parse: (rawBody) => singleEvent(parseSandboxCallback(rawBody)),
        register: async (url, secret) => {
          const answer = await this.request('POST', '/v1/webhook_endpoints', undefined, { url, secret });
          const endpoint = sandboxEndpointSchema.safeParse(answer.payload);
          if (!answer.ok || !endpoint.success) throw refusalOf(this.name, answer.status, answer.payload, 'the webhook registration');
          return { endpointId: endpoint.data.id };
        },
      };
    }
  }

  async authorize(request: AuthorizeRequest): Promise<ProcessorPayment> {
    const payment = await this.call('POST', '/v1/payments', request.reference, {
      amount: request.amount,
      currency: request.currency.toLowerCase(),
      capture_method: request.captureMethod === 'MANUAL' ? 'manual' : 'automatic',
      three_ds: request.threeDs ? 'required' : 'automatic',
      return_url: request.returnUrl,
      reference: request.reference,
      ...paymentMethodFields(request.paymentMethod),
      ...(request.saveCard ? { setup_future_usage: 'off_session' } : {}),
      ...(request.allowPartialAuthorization && methodTypeOf(request.paymentMethod) === 'card' ? { partial_authorization: 'allowed' } : {}),
    });
    return toProcessorPayment(payment);
  }

  async capture(transactionId: string, amount: number, idempotencyKey: string) {
    return toProcessorPayment(
      await this.call('POST', `/v1/payments/${encodeURIComponent(transactionId)}/capture`, idempotencyKey, { amount_to_capture: amount }),
    );
  }

  async void(transactionId: string, idempotencyKey: string) {
    return toProcessorPayment(await this.call('POST', `/v1/payments/${encodeURIComponent(transactionId)}/cancel`, idempotencyKey, {}));
  }

  async sync(transactionId: string) {
    return toProcessorPayment(await this.call('GET', `/v1/payments/${encodeURIComponent(transactionId)}`));
  }

  async findByReference(reference: string): Promise<ProcessorPayment | null> {
    const payment = await this.call('GET', `/v1/payments?reference=${encodeURIComponent(reference)}`, undefined, undefined, true);
    return payment === null ? null : toProcessorPayment(payment);
  }

  async refund(request: RefundRequest): Promise<ProcessorRefund> {
    const body = {
      payment: request.transactionId,
      amount: request.amount,
      reference: request.reference,
      ...(request.reason ? { reason: request.reason } : {}),
    };
    return toProcessorRefund(await this.callRefund('POST', '/v1/refunds', request.reference, body));
  }

  async syncRefund(refundId: string): Promise<ProcessorRefund> {
    return toProcessorRefund(await this.callRefund('GET', `/v1/refunds/${encodeURIComponent(refundId)}`));
  }

  async findRefundByReference(reference: string): Promise<ProcessorRefund | null> {
    const refund = await this.callRefund('GET', `/v1/refunds?reference=${encodeURIComponent(reference)}`, undefined, undefined, true);
    return refund === null ? null : toProcessorRefund(refund);
  }

  async createPayout(request: PayoutRequest): Promise<ProcessorPayout> {
    const body = {
      amount: request.amount,
      currency: request.currency.toLowerCase(),
      destination: destinationFields(request.destination),
      reference: request.reference,
      ...(request.description ? { description: request.description } : {}),
    };
    return toProcessorPayout(await this.readPayout('POST', '/v1/payouts', request.reference, body));
  }

  async cancelPayout(payoutId: string, idempotencyKey: string): Promise<ProcessorPayout> {
    return toProcessorPayout(await this.readPayout('POST', `/v1/payouts/${encodeURIComponent(payoutId)}/cancel`, idempotencyKey, {}));
  }

  async syncPayout(payoutId: string): Promise<ProcessorPayout> {
    return toProcessorPayout(await this.readPayout('GET', `/v1/payouts/${encodeURIComponent(payoutId)}`));
  }

  async findPayoutByReference(reference: string): Promise<ProcessorPayout | null> {
    const payout = await this.read(
      sandboxPayoutSchema,
      'a payout',
      'GET',
      `/v1/payouts?reference=${encodeURIComponent(reference)}`,
      undefined,
      undefined,
      true,
    );
    return payout === null ? null : toProcessorPayout(payout);
  }

  async acceptDispute(disputeId: string, idempotencyKey: string): Promise<ProcessorDispute> {
    return toProcessorDispute(await this.callDispute(`/v1/disputes/${encodeURIComponent(disputeId)}/accept`, idempotencyKey, {}));
  }

  async submitDisputeEvidence(disputeId: string, evidence: Record<string, string>, idempotencyKey: string): Promise<ProcessorDispute> {
    return toProcessorDispute(await this.callDispute(`/v1/disputes/${encodeURIComponent(disputeId)}/evidence`, idempotencyKey, { evidence }));
  }

  async createSession(request: { wallet: string; amount: number; currency: string }): Promise<WalletSession> {
    const answer = await this.request('POST', '/v1/sessions', undefined, {
      wallet: request.wallet,
      amount: request.amount,
      currency: request.currency.toLowerCase(),
    });
    const session = sandboxSessionSchema.safeParse(answer.payload);
    if (!answer.ok || !session.success) throw refusalOf(this.name, answer.status, answer.payload, 'a session');
    return { wallet: session.data.wallet, sessionToken: session.data.session_token, expiresAt: new Date(session.data.expires_at * 1000) };
  }

  private async call(method: string, path: string, idempotencyKey?: string, body?: unknown): Promise<SandboxPayment>;
  private async call(method: string, path: string, idempotencyKey: undefined, body: undefined, notFoundIsNull: true): Promise<SandboxPayment | null>;
  private async call(method: string, path: string, idempotencyKey?: string, body?: unknown, notFoundIsNull = false): Promise<SandboxPayment | null> {
    return this.read(sandboxPaymentSchema, 'a payment', method, path, idempotencyKey, body, notFoundIsNull);
  }

  private async callRefund(method: string, path: string, idempotencyKey?: string, body?: unknown): Promise<SandboxRefund>;
  private async callRefund(method: string, path: string, idempotencyKey: undefined, body: undefined, notFoundIsNull: true): Promise<SandboxRefund | null>;
  private async callRefund(method: string, path: string, idempotencyKey?: string, body?: unknown, notFoundIsNull = false): Promise<SandboxRefund | null> {
    return this.read(sandboxRefundSchema, 'a refund', method, path, idempotencyKey, body, notFoundIsNull);
  }

  private async readPayout(method: string, path: string, idempotencyKey?: string, body?: unknown): Promise<SandboxPayout> {
    return (await this.read(sandboxPayoutSchema, 'a payout', method, path, idempotencyKey, body, false))!;
  }

  private async callDispute(path: string, idempotencyKey: string, body: unknown): Promise<SandboxDispute> {
    return (await this.read(sandboxDisputeSchema, 'a dispute', 'POST', path, idempotencyKey, body, false))!;
  }

  /** One call answered with a `schema` object (or, with `notFoundIsNull`, the processor's own "no such one"). */
  private async read<T>(
    schema: z.ZodType<T>,
    what: string,
    method: string,
    path: string,
    idempotencyKey: string | undefined,
    body: unknown,
    notFoundIsNull: boolean,
  ): Promise<T | null> {
    const { ok, status, payload } = await this.request(method, path, idempotencyKey, body);
    // A decline is a payment with status "failed" (HTTP 402): an answer, not an error.
    if (ok || status === 402) {
      const resource = schema.safeParse(payload);
      if (resource.success) return resource.data;
      // It answered "done" in a shape we cannot read: whatever it did, it did; sync will tell.
      throw new ConnectorError(`${this.name} answered HTTP ${status} with a body that is not ${what}`, 'bad_response', true);
    }
    if (notFoundIsNull && provesNoneExists(status, payload)) return null;
    throw refusalOf(this.name, status, payload, 'the request');
  }

  private request(method: string, path: string, idempotencyKey?: string, body?: unknown): Promise<JsonAnswer> {
    return callJson(this.name, `${this.#baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.credentials.apiKey}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      body,
      timeoutMs: this.options.timeoutMs,
    });
  }
}
