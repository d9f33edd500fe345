// The sandbox's callbacks: the signature checked over the exact bytes received, then the event read as the
// port's ConnectorCallback (connectors/callbacks.ts applies it).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConnectorCallback } from '../port.ts';
import { toProcessorDispute, toProcessorPayment, toProcessorPayout, toProcessorRefund } from './status-map.ts';
import { sandboxCallbackSchema, type SandboxPayment } from './wire.ts';

/** How far a callback's signed timestamp may be from now: older ones are replays. */
export const CALLBACK_TOLERANCE_SECONDS = 300;

/** The header that carries a callback's signature. */
export const SIGNATURE_HEADER = 'sandbox-signature';

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

export function parseSandboxCallback(rawBody: Buffer): ConnectorCallback | null {
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
    return eventType.startsWith('payment_method.')
      ? { kind: 'payment_method', eventId, eventType, token: object.id, status: object.status, reference: null }
      : null;
  }
  if ('object' in object && object.object === 'payout') {
    return eventType.startsWith('payout.')
      ? { kind: 'payout', eventId, eventType, payout: toProcessorPayout(object), reference: object.reference ?? null }
      : null;
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
