// The connector for the project's sandbox processor (src/sandbox), called over HTTP like a real processor.
import { z } from 'zod';
import type { ProcessorPaymentStatus } from '../domain/payments/attempt-machine.ts';
import { ConnectorError, type AuthorizeRequest, type Connector, type ProcessorPayment } from './connector.ts';

export const sandboxCredentialsSchema = z.object({
  apiKey: z.string().regex(/^sk_sandbox_[A-Za-z0-9]{8,64}$/, 'must be a sandbox key: sk_sandbox_ and 8 to 64 letters or digits'),
});
export type SandboxCredentials = z.infer<typeof sandboxCredentialsSchema>;

/** The sandbox's payment object, as far as the service reads it; anything else is not an answer. */
const sandboxPaymentSchema = z.object({
  id: z.string().min(1),
  status: z.enum(['requires_device_data', 'requires_authentication', 'requires_capture', 'succeeded', 'failed', 'canceled']),
  amount: z.number().int(),
  amount_capturable: z.number().int().nonnegative(),
  amount_captured: z.number().int().nonnegative(),
  next_action: z.object({ type: z.literal('redirect'), redirect_url: z.string() }).nullable(),
  error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean() }).nullable(),
});
type SandboxPayment = z.infer<typeof sandboxPaymentSchema>;

const sandboxErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

function normaliseStatus(payment: SandboxPayment): ProcessorPaymentStatus {
  switch (payment.status) {
    case 'requires_device_data':
      return 'requires_device_data';
    case 'requires_authentication':
      return 'requires_authentication';
    case 'requires_capture':
      return 'authorized';
    case 'succeeded':
      return payment.amount_captured < payment.amount ? 'partially_captured' : 'captured';
    case 'failed':
      return payment.error?.code === 'authentication_failed' ? 'authentication_failed' : 'failed';
    case 'canceled':
      return 'voided';
  }
}

function toProcessorPayment(payment: SandboxPayment): ProcessorPayment {
  return {
    transactionId: payment.id,
    status: normaliseStatus(payment),
    amountCapturable: payment.amount_capturable,
    amountCaptured: payment.amount_captured,
    redirectUrl: payment.next_action?.redirect_url ?? null,
    error: payment.error,
  };
}

/** HTTP statuses that, with the sandbox's error body, say the request changed nothing. */
const DEFINITE_REFUSALS: ReadonlySet<number> = new Set([400, 401, 403, 404]);

/** A refusal with `code` under `status` said the request changed nothing (409 only for the wrong state). */
function isDefiniteRefusal(status: number, code: string): boolean {
  return DEFINITE_REFUSALS.has(status) || (status === 409 && code === 'invalid_state');
}

export class SandboxConnector implements Connector {
  readonly name = 'sandbox';

  constructor(
    private readonly credentials: SandboxCredentials,
    private readonly options: { baseUrl: string; timeoutMs: number },
  ) {}

  authorize(request: AuthorizeRequest): Promise<ProcessorPayment> {
    return this.call('POST', '/v1/payments', request.reference, {
      amount: request.amount,
      currency: request.currency.toLowerCase(),
      capture_method: request.captureMethod === 'MANUAL' ? 'manual' : 'automatic',
      three_ds: request.threeDs ? 'required' : 'automatic',
      return_url: request.returnUrl,
      reference: request.reference,
      card: {
        number: request.card.number,
        exp_month: request.card.expiryMonth,
        exp_year: request.card.expiryYear,
        cvc: request.card.cvc,
        ...(request.card.holderName ? { holder_name: request.card.holderName } : {}),
      },
    }) as Promise<ProcessorPayment>;
  }

  capture(transactionId: string, amount: number, idempotencyKey: string) {
    return this.call('POST', `/v1/payments/${encodeURIComponent(transactionId)}/capture`, idempotencyKey, { amount_to_capture: amount }) as Promise<ProcessorPayment>;
  }

  void(transactionId: string, idempotencyKey: string) {
    return this.call('POST', `/v1/payments/${encodeURIComponent(transactionId)}/cancel`, idempotencyKey, {}) as Promise<ProcessorPayment>;
  }

  sync(transactionId: string) {
    return this.call('GET', `/v1/payments/${encodeURIComponent(transactionId)}`) as Promise<ProcessorPayment>;
  }

  async findByReference(reference: string): Promise<ProcessorPayment | null> {
    return this.call('GET', `/v1/payments?reference=${encodeURIComponent(reference)}`, undefined, undefined, true);
  }

  private async call(method: string, path: string, idempotencyKey?: string, body?: unknown, notFoundIsNull = false): Promise<ProcessorPayment | null> {
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl}${path}`, {
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
      if ((error as Error).name === 'TimeoutError') throw new ConnectorError(`sandbox did not answer within ${this.options.timeoutMs} ms`, 'timeout', true);
      if (cause?.code === 'ECONNREFUSED') throw new ConnectorError('sandbox refused the connection', 'unreachable', false);
      throw new ConnectorError(`sandbox request failed: ${(error as Error).message}`, 'unreachable', true);
    }
    const payload: unknown = await response.json().catch(() => undefined);
    // A decline is a payment with status "failed" (HTTP 402): an answer, not an error.
    if (response.ok || response.status === 402) {
      const payment = sandboxPaymentSchema.safeParse(payload);
      if (payment.success) return toProcessorPayment(payment.data);
      // It answered "done" in a shape we cannot read: whatever it did, it did; sync will tell.
      throw new ConnectorError(`sandbox answered HTTP ${response.status} with a body that is not a payment`, 'bad_response', true);
    }
    const error = sandboxErrorSchema.safeParse(payload).data?.error;
    // Only the sandbox's own "no such payment" proves there is none (a 404 from a wrong URL does not).
    if (response.status === 404 && notFoundIsNull && error?.code === 'resource_missing') return null;
    // A well-formed refusal of the request (bad input, bad credentials, unknown payment, wrong state)
    // means nothing was done. Anything else (an idempotency conflict, throttling, a server error, a body
    // we cannot read) may hide a change, so the outcome is unknown.
    if (error !== undefined && isDefiniteRefusal(response.status, error.code)) {
      throw new ConnectorError(`sandbox rejected the request: ${error.message}`, 'rejected', false, error.code);
    }
    throw new ConnectorError(`sandbox answered HTTP ${response.status}${error ? ` (${error.code})` : ''}`, 'server_error', true, error?.code);
  }
}
