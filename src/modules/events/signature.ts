// The outgoing webhook on the wire (seed, section 2 and 5): exactly six fields, in the seed's order,
// serialized once; the stored bytes are signed and sent identically on every attempt.
import { createHmac } from 'node:crypto';
import type { ContentType, EventType } from './catalog.ts';

export interface OutgoingWebhook {
  merchantId: string;
  eventId: string;
  eventType: EventType;
  contentType: ContentType;
  /** The resource in its snake_case wire shape (its module's wire.ts; events/wire-schemas.ts lists them). */
  object: Record<string, unknown>;
  timestamp: Date;
  /** The merchant whose connector account processed the object, when not `merchantId` (docs/platforms.md); null otherwise. */
  processorMerchantId?: string | null;
}

/** The exact body: `{"merchant_id","event_id","event_type","content":{"type","object"},"timestamp","processor_merchant_id"}`. */
export function serializeWebhook(webhook: OutgoingWebhook): string {
  const { head, tail } = webhookAroundId(webhook);
  return `${head}${JSON.stringify(webhook.eventId)}${tail}`;
}

/**
 * The body around its event id: `head` + the id as a JSON string + `tail` is serializeWebhook's body, so the
 * copies of an event for a platform's profiles (docs/platforms.md) differ from it in their id only.
 */
export function webhookAroundId(webhook: Omit<OutgoingWebhook, 'eventId'>): { head: string; tail: string } {
  const head = JSON.stringify({ merchant_id: webhook.merchantId });
  const tail = JSON.stringify({
    event_type: webhook.eventType,
    content: { type: webhook.contentType, object: webhook.object },
    timestamp: webhook.timestamp.toISOString(),
    processor_merchant_id: webhook.processorMerchantId ?? null,
  });
  return { head: `${head.slice(0, -1)},"event_id":`, tail: `,${tail.slice(1)}` };
}

/** The keys that sign a delivery: the profile's current one, and during a rotation's overlap the one it replaced (docs/webhooks.md). */
export interface SigningKeys {
  current: string;
  previous: string | null;
}

/** `X-Webhook-Signature-512`: lowercase hex HMAC-SHA512 of the exact body bytes, keyed with the profile's payment_response_hash_key. */
export function webhookSignature(body: string | Buffer, key: string): string {
  return createHmac('sha512', key).update(body).digest('hex');
}

/**
 * The Standard Webhooks headers sent beside the seed's (never instead of it): replay protection through
 * the signed timestamp, and off-the-shelf verifiers. The key is the UTF-8 bytes of the same hash key
 * (for the standard libraries: `whsec_` + its base64). Several keys give the standard's space-separated
 * list of signatures, in the order given (during a rotation: the new key's first); a receiver accepts any.
 */
export function standardWebhookHeaders(eventId: string, sentAt: Date, body: string, keys: string | readonly string[]): Record<string, string> {
  const timestamp = Math.floor(sentAt.getTime() / 1000).toString();
  const signatures = (typeof keys === 'string' ? [keys] : keys).map(
    (key) => `v1,${createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`,
  );
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
