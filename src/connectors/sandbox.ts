// The connector for the project's sandbox processor (src/sandbox), called over HTTP like a real processor.
import { z } from 'zod';
import type { ProcessorPaymentStatus } from '../domain/payments/attempt-machine.ts';
import { ConnectorError, type AuthorizeRequest, type Connector, type ProcessorPayment } from './connector.ts';

export const sandboxCredentialsSchema = z.object({
  apiKey: z.string().regex(/^sk_sandbox_[A-Za-z0-9]{8,64}$/, 'must be a sandbox key: sk_sandbox_ and 8 to 64 letters or digits'),
});
export type SandboxCredentials = z.infer<typeof sandboxCredentialsSchema>;

interface SandboxPayment {
  id: string;
  status: 'requires_device_data' | 'requires_authentication' | 'requires_capture' | 'succeeded' | 'failed' | 'canceled';
  amount: number;
  amount_capturable: number;
  amount_captured: number;
  next_action: { type: 'redirect'; redirect_url: string } | null;
  error: { code: string; message: string; retryable: boolean } | null;
}

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
    const payload = (await response.json().catch(() => null)) as (SandboxPayment & { error?: { code: string; message: string } }) | null;
    // A decline is a payment with status "failed" (HTTP 402): an answer, not an error.
    if ((response.ok || response.status === 402) && payload?.id) return toProcessorPayment(payload);
    if (response.status === 404 && notFoundIsNull) return null;
    if (response.status >= 500) throw new ConnectorError(`sandbox answered HTTP ${response.status}`, 'server_error', true);
    const error = payload?.error;
    throw new ConnectorError(`sandbox rejected the request: ${error?.message ?? `HTTP ${response.status}`}`, 'rejected', false, error?.code);
  }
}
