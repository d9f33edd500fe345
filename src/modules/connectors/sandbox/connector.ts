// The connectors for the project's sandbox processor (src/sandbox), called over HTTP like real processors.
// The sandbox serves two processors that behave differently: "sandbox" (every payment method, wallet
// sessions) at /v1 and "fauxpay" (cards and bank debits only, other card rules) at /fauxpay/v1.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ProcessorPaymentStatus } from '../../payments/machine/attempt.ts';
import {
  ConnectorError,
  methodTypeOf,
  type AuthorizeRequest,
  type Connector,
  type ConnectorCallback,
  type ConnectorWebhooks,
  type PaymentMethod,
  type ProcessorNextAction,
  type ProcessorDispute,
  type PayoutDestination,
  type PayoutRequest,
  type ProcessorPayment,
  type ProcessorPayout,
  type ProcessorRefund,
  type RefundRequest,
  type WalletSession,
} from '../port.ts';

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
      .regex(new RegExp(`^${personality.keyPrefix}[A-Za-z0-9]{8,64}$`), `must be a ${personality.name} key: ${personality.keyPrefix} and 8 to 64 letters or digits`),
  });
export type SandboxCredentials = z.infer<ReturnType<typeof credentialsSchemaFor>>;

/**
 * Text a processor sends that may be stored: bounded, without NUL, and well-formed (PostgreSQL holds
 * neither a NUL nor, in JSON such as a next action, a lone surrogate).
 */
const processorText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL')
    .refine((value) => value.isWellFormed(), 'must be well-formed Unicode');
/** Amounts in minor units, within the database's integer range. */
const processorAmount = z.number().int().nonnegative().max(2_147_483_647);

/** The sandbox's payment object, as far as the service reads it; anything else is not an answer. */
const sandboxPaymentSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  status: z.enum(['requires_device_data', 'requires_authentication', 'requires_customer_action', 'requires_capture', 'processing', 'succeeded', 'failed', 'canceled']),
  amount: processorAmount,
  amount_capturable: processorAmount,
  amount_captured: processorAmount,
  next_action: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('redirect'), redirect_url: processorText(2048) }),
      z.object({
        type: z.literal('display_instructions'),
        redirect_url: processorText(2048),
        instructions: z.record(processorText(100), z.union([processorText(1000), z.number()])),
      }),
    ])
    .nullable(),
  payment_method_token: processorText(200).nullish(),
  error: z.object({ code: processorText(100), message: processorText(1000), retryable: z.boolean() }).nullable(),
  canceled_after_capture: z.boolean().optional(),
});
type SandboxPayment = z.infer<typeof sandboxPaymentSchema>;

/** The sandbox's refund object, as far as the service reads it. */
const sandboxRefundSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  object: z.literal('refund'),
  status: z.enum(['pending', 'succeeded', 'failed', 'requires_review']),
  amount: processorAmount,
  reference: processorText(100).nullish(),
  error: z.object({ code: processorText(100), message: processorText(1000) }).nullable(),
});
type SandboxRefund = z.infer<typeof sandboxRefundSchema>;

/** The sandbox's dispute object, as far as the service reads it. */
const sandboxDisputeSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  object: z.literal('dispute'),
  payment: processorText(100).pipe(z.string().min(1)),
  status: z.enum(['needs_response', 'accepted', 'under_review', 'won', 'lost', 'expired', 'cancelled']),
  amount: processorAmount,
  currency: z.string().regex(/^[a-z]{3}$/),
  reason: processorText(100).nullable(),
  evidence_due_by: z.number().int().min(0).max(253_402_300_799).nullable(),
});
type SandboxDispute = z.infer<typeof sandboxDisputeSchema>;

/** The sandbox's payout object, as far as the service reads it. */
const sandboxPayoutSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  object: z.literal('payout'),
  status: z.enum(['pending', 'in_transit', 'paid', 'failed', 'cancelled', 'expired', 'returned']),
  reference: processorText(100).nullish(),
  error: z.object({ code: processorText(100), message: processorText(1000) }).nullable(),
});
type SandboxPayout = z.infer<typeof sandboxPayoutSchema>;

/** The sandbox's saved card (payment method) object, as far as the service reads it. */
const sandboxPaymentMethodSchema = z.object({
  id: processorText(200).pipe(z.string().min(1)),
  object: z.literal('payment_method'),
  status: z.enum(['active', 'revoked']),
});

const eventName = z.string().regex(/^[\x21-\x7e]{1,100}$/);

/** A sandbox callback: `{"id","type","created","data":{"object":<the payment or refund as GET returns it>}}`. */
const sandboxCallbackSchema = z.object({
  id: eventName,
  type: eventName,
  data: z.object({
    object: z.union([sandboxRefundSchema, sandboxDisputeSchema, sandboxPayoutSchema, sandboxPaymentMethodSchema, sandboxPaymentSchema.extend({ reference: processorText(100).nullish() })]),
  }),
});

/** How far a callback's signed timestamp may be from now: older ones are replays. */
export const CALLBACK_TOLERANCE_SECONDS = 300;

/**
 * `sandbox-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, checked in constant
 * time, with the timestamp within CALLBACK_TOLERANCE_SECONDS of `now`.
 */
export function verifySandboxSignature(rawBody: Buffer, header: string | undefined, secret: string, now: Date): boolean {
  const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (match === null) return false;
  const [, timestamp = '', signature = ''] = match;
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > CALLBACK_TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

function parseSandboxCallback(rawBody: Buffer): ConnectorCallback | null {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return null;
  }
  const callback = sandboxCallbackSchema.safeParse(json);
  if (!callback.success) return null;
  const { id: eventId, type: eventType, data } = callback.data;
  const { object } = data;
  // The event's name and its object must agree: a `refund.*` event carries a refund, a `payment.*` one a payment.
  if ('object' in object && object.object === 'payment_method') {
    return eventType.startsWith('payment_method.') ? { kind: 'payment_method', eventId, eventType, token: object.id, status: object.status, reference: null } : null;
  }
  if ('object' in object && object.object === 'payout') {
    return eventType.startsWith('payout.') ? { kind: 'payout', eventId, eventType, payout: toProcessorPayout(object), reference: object.reference ?? null } : null;
  }
  if ('object' in object && object.object === 'dispute') {
    return eventType.startsWith('dispute.') ? { kind: 'dispute', eventId, eventType, dispute: toProcessorDispute(object), reference: null } : null;
  }
  const reference = object.reference ?? null;
  if ('object' in object && object.object === 'refund') {
    return eventType.startsWith('refund.') ? { kind: 'refund', eventId, eventType, refund: toProcessorRefund(object), reference } : null;
  }
  return eventType.startsWith('payment.') ? { kind: 'payment', eventId, eventType, payment: toProcessorPayment(object as SandboxPayment), reference } : null;
}

const sandboxEndpointSchema = z.object({ id: z.string().min(1) });

const sandboxSessionSchema = z.object({ wallet: z.string(), session_token: z.string().min(1), expires_at: z.number().int() });

const sandboxErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

function normaliseStatus(payment: SandboxPayment): ProcessorPaymentStatus {
  switch (payment.status) {
    case 'requires_device_data':
      return 'requires_device_data';
    case 'requires_authentication':
    case 'requires_customer_action':
      return 'requires_authentication';
    case 'processing':
      return 'processing';
    case 'requires_capture':
      return payment.amount_capturable < payment.amount ? 'partially_authorized' : 'authorized';
    case 'succeeded':
      return payment.amount_captured < payment.amount ? 'partially_captured' : 'captured';
    case 'failed':
      return payment.error?.code === 'authentication_failed' ? 'authentication_failed' : 'failed';
    case 'canceled':
      return payment.canceled_after_capture ? 'voided_post_capture' : 'voided';
  }
}

function nextActionOf(payment: SandboxPayment): ProcessorNextAction | null {
  const action = payment.next_action;
  if (action === null) return null;
  return action.type === 'redirect'
    ? { type: 'redirect', url: action.redirect_url }
    : { type: 'display_instructions', url: action.redirect_url, instructions: action.instructions };
}

function toProcessorPayment(payment: SandboxPayment): ProcessorPayment {
  return {
    transactionId: payment.id,
    status: normaliseStatus(payment),
    amountCapturable: payment.amount_capturable,
    amountCaptured: payment.amount_captured,
    nextAction: nextActionOf(payment),
    paymentMethodToken: payment.payment_method_token ?? null,
    error: payment.error,
  };
}

function toProcessorRefund(refund: SandboxRefund): ProcessorRefund {
  return {
    refundId: refund.id,
    status: refund.status === 'requires_review' ? 'review' : refund.status,
    amount: refund.amount,
    error: refund.error,
  };
}

const PAYOUT_STATUSES = {
  pending: 'initiated',
  in_transit: 'processing',
  paid: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
  expired: 'expired',
  returned: 'reversed',
} as const satisfies Record<SandboxPayout['status'], ProcessorPayout['status']>;

function toProcessorPayout(payout: SandboxPayout): ProcessorPayout {
  return { payoutId: payout.id, status: PAYOUT_STATUSES[payout.status], error: payout.error };
}

/** A payout's destination in the sandbox's wire names. */
function destinationFields(destination: PayoutDestination): Record<string, unknown> {
  return destination.type === 'card'
    ? {
        type: 'card',
        card: {
          number: destination.card.number,
          exp_month: destination.card.expiryMonth,
          exp_year: destination.card.expiryYear,
          ...(destination.card.holderName ? { holder_name: destination.card.holderName } : {}),
        },
      }
    : { type: 'bank_account', account_holder_name: destination.accountHolderName, iban: destination.iban };
}

const DISPUTE_STATUSES = {
  needs_response: 'opened',
  accepted: 'accepted',
  under_review: 'challenged',
  won: 'won',
  lost: 'lost',
  expired: 'expired',
  cancelled: 'cancelled',
} as const satisfies Record<SandboxDispute['status'], ProcessorDispute['status']>;

function toProcessorDispute(dispute: SandboxDispute): ProcessorDispute {
  return {
    disputeId: dispute.id,
    transactionId: dispute.payment,
    status: DISPUTE_STATUSES[dispute.status],
    amount: dispute.amount,
    currency: dispute.currency.toUpperCase(),
    reason: dispute.reason,
    evidenceDueBy: dispute.evidence_due_by === null ? null : new Date(dispute.evidence_due_by * 1000),
  };
}

/** The request body's payment method fields, in the sandbox's wire names. */
function paymentMethodFields(method: PaymentMethod): Record<string, unknown> {
  switch (method.type) {
    case 'card':
      return {
        payment_method_type: 'card',
        card: {
          number: method.card.number,
          exp_month: method.card.expiryMonth,
          exp_year: method.card.expiryYear,
          cvc: method.card.cvc,
          ...(method.card.holderName ? { holder_name: method.card.holderName } : {}),
        },
      };
    case 'saved_card':
      return { payment_method_type: 'card', payment_method_token: method.token, ...(method.cvc === null ? { off_session: true } : { card_cvc: method.cvc }) };
    case 'bank_debit':
      return { payment_method_type: 'bank_debit', bank_debit: { account_holder_name: method.accountHolderName, iban: method.iban } };
    case 'wallet':
    case 'pay_later':
      return { payment_method_type: method.type, [method.type]: { type: method.provider, payment_token: method.paymentToken } };
    case 'bank_redirect':
      return { payment_method_type: 'bank_redirect', bank_redirect: { bank: method.bank } };
    case 'bank_transfer':
      return { payment_method_type: 'bank_transfer', bank_transfer: {} };
    case 'crypto':
      return { payment_method_type: 'crypto', crypto: { network: method.network } };
  }
}

/** HTTP statuses that, with the sandbox's error body, say the request changed nothing. */
const DEFINITE_REFUSALS: ReadonlySet<number> = new Set([400, 401, 403, 404]);

/** A refusal with `code` under `status` said the request changed nothing (409 only for the wrong state). */
function isDefiniteRefusal(status: number, code: string): boolean {
  return DEFINITE_REFUSALS.has(status) || (status === 409 && code === 'invalid_state');
}

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
        verify: (rawBody, headers, secret, now) => verifySandboxSignature(rawBody, headers['sandbox-signature'], secret, now),
        parse: parseSandboxCallback,
        register: async (url, secret) => {
          const { response, payload } = await this.request('POST', '/v1/webhook_endpoints', undefined, { url, secret });
          const endpoint = sandboxEndpointSchema.safeParse(payload);
          if (!response.ok || !endpoint.success) throw this.refusal(response.status, payload, 'the webhook registration');
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
    return toProcessorPayment(await this.call('POST', `/v1/payments/${encodeURIComponent(transactionId)}/capture`, idempotencyKey, { amount_to_capture: amount }));
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
    const body = { payment: request.transactionId, amount: request.amount, reference: request.reference, ...(request.reason ? { reason: request.reason } : {}) };
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
    const payout = await this.read(sandboxPayoutSchema, 'a payout', 'GET', `/v1/payouts?reference=${encodeURIComponent(reference)}`, undefined, undefined, true);
    return payout === null ? null : toProcessorPayout(payout);
  }

  async acceptDispute(disputeId: string, idempotencyKey: string): Promise<ProcessorDispute> {
    return toProcessorDispute(await this.callDispute(`/v1/disputes/${encodeURIComponent(disputeId)}/accept`, idempotencyKey, {}));
  }

  async submitDisputeEvidence(disputeId: string, evidence: Record<string, string>, idempotencyKey: string): Promise<ProcessorDispute> {
    return toProcessorDispute(await this.callDispute(`/v1/disputes/${encodeURIComponent(disputeId)}/evidence`, idempotencyKey, { evidence }));
  }

  async createSession(request: { wallet: string; amount: number; currency: string }): Promise<WalletSession> {
    const body = await this.request('POST', '/v1/sessions', undefined, { wallet: request.wallet, amount: request.amount, currency: request.currency.toLowerCase() });
    const session = sandboxSessionSchema.safeParse(body.payload);
    if (!body.response.ok || !session.success) throw this.refusal(body.response.status, body.payload, 'a session');
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
  private async read<T>(schema: z.ZodType<T>, what: string, method: string, path: string, idempotencyKey: string | undefined, body: unknown, notFoundIsNull: boolean): Promise<T | null> {
    const { response, payload } = await this.request(method, path, idempotencyKey, body);
    // A decline is a payment with status "failed" (HTTP 402): an answer, not an error.
    if (response.ok || response.status === 402) {
      const resource = schema.safeParse(payload);
      if (resource.success) return resource.data;
      // It answered "done" in a shape we cannot read: whatever it did, it did; sync will tell.
      throw new ConnectorError(`${this.name} answered HTTP ${response.status} with a body that is not ${what}`, 'bad_response', true);
    }
    // Only the processor's own "no such payment" proves there is none (a 404 from a wrong URL does not).
    if (response.status === 404 && notFoundIsNull && sandboxErrorSchema.safeParse(payload).data?.error.code === 'resource_missing') return null;
    throw this.refusal(response.status, payload, 'the request');
  }

  /**
   * A well-formed refusal (bad input, bad credentials, unknown payment, wrong state) means nothing was
   * done. Anything else (an idempotency conflict, throttling, a server error, a body we cannot read) may
   * hide a change, so the outcome is unknown.
   */
  private refusal(status: number, payload: unknown, what: string): ConnectorError {
    const error = sandboxErrorSchema.safeParse(payload).data?.error;
    if (error !== undefined && isDefiniteRefusal(status, error.code)) {
      const kind = status === 401 || status === 403 ? 'unauthorized' : 'rejected';
      return new ConnectorError(`${this.name} rejected ${what}: ${error.message}`, kind, false, error.code);
    }
    return new ConnectorError(`${this.name} answered HTTP ${status}${error ? ` (${error.code})` : ''}`, 'server_error', true, error?.code);
  }

  private async request(method: string, path: string, idempotencyKey?: string, body?: unknown): Promise<{ response: Response; payload: unknown }> {
    let response: Response;
    try {
      response = await fetch(`${this.#baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.credentials.apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      if ((error as Error).name === 'TimeoutError') throw new ConnectorError(`${this.name} did not answer within ${this.options.timeoutMs} ms`, 'timeout', true);
      if (cause?.code === 'ECONNREFUSED') throw new ConnectorError(`${this.name} refused the connection`, 'unreachable', false);
      throw new ConnectorError(`${this.name} request failed: ${(error as Error).message}`, 'unreachable', true);
    }
    // A body that times out or is not JSON reads as undefined: the callers treat it as unreadable.
    return { response, payload: await response.json().catch(() => undefined) };
  }
}
