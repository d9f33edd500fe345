// Stripe's callbacks (docs.stripe.com/webhooks): the Stripe-Signature header checked over the exact bytes
// received, then the event read as the port's ConnectorCallback (connectors/callbacks.ts applies it).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConnectorCallback } from '../port.ts';
import { toProcessorDispute, toProcessorPayment, toProcessorRefund } from './status-map.ts';
import { disputeSchema, eventSchema, paymentIntentSchema, refundSchema } from './wire.ts';

/** How far a callback's signed timestamp may be from now (Stripe's libraries' default): older ones are replays. */
export const CALLBACK_TOLERANCE_SECONDS = 300;

export const SIGNATURE_HEADER = 'stripe-signature';

/**
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=…][,v0=…]`: the timestamp
 * within the tolerance, and any one of the v1 signatures (several while a secret is rolled) matching, each
 * compared in constant time. Other schemes (v0: test events of old) are ignored.
 */
export function verifyStripeSignature(rawBody: Buffer, header: string | undefined, secret: string, now: Date): boolean {
  if (header === undefined || header.length > 4096) return false;
  const pairs = header.split(',').map((pair) => pair.split('='));
  const timestamp = pairs.find(([key]) => key === 't')?.[1] ?? '';
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now.getTime() / 1000 - Number(timestamp)) > CALLBACK_TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  return pairs
    .filter(([key, value]) => key === 'v1' && /^[0-9a-f]{64}$/.test(value ?? ''))
    .reduce((matched, [, value]) => timingSafeEqual(expected, Buffer.from(value!, 'hex')) || matched, false);
}

export function parseStripeCallback(rawBody: Buffer): ConnectorCallback | null {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return null;
  }
  const event = eventSchema.safeParse(json);
  if (!event.success) return null;
  const { id: eventId, type: eventType, created, data } = event.data;
  // The event's name and its object must agree; an event this connector does not act on is acknowledged only.
  if (eventType.startsWith('payment_intent.')) {
    const intent = paymentIntentSchema.safeParse(data.object);
    return intent.success
      ? { kind: 'payment', eventId, eventType, payment: toProcessorPayment(intent.data), reference: intent.data.metadata.reference ?? null }
      : null;
  }
  if (eventType.startsWith('refund.') || eventType.startsWith('charge.refund.')) {
    const refund = refundSchema.safeParse(data.object);
    return refund.success
      ? { kind: 'refund', eventId, eventType, refund: toProcessorRefund(refund.data), reference: refund.data.metadata.reference ?? null }
      : null;
  }
  if (eventType.startsWith('charge.dispute.')) {
    const dispute = disputeSchema.safeParse(data.object);
    return dispute.success ? { kind: 'dispute', eventId, eventType, dispute: toProcessorDispute(dispute.data, created), reference: null } : null;
  }
  return null;
}
