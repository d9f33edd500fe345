// The outgoing webhook's body as a schema (seed, section 6; docs/webhooks.md, "On the wire"): the envelope
// signature.ts serializes, and one member per event type whose `content` is the shape catalog.ts assigns it.
// Source of scripts/webhook-schemas.ts's published JSON Schemas and the server SDK's WebhookEvent type;
// the service itself never validates with it.
import { z } from 'zod';
import { CONTENT_TYPES, EVENT_TYPES, contentTypeOf, type ContentType, type EventType } from './catalog.ts';
import { wireInstant } from './wire.ts';
import { disputeWebhookObjectSchema } from '../disputes/wire.ts';
import { mandateWebhookObjectSchema } from '../mandates/wire.ts';
import { paymentWebhookObjectSchema } from '../payments/wire.ts';
import { payoutWebhookObjectSchema } from '../payouts/wire.ts';
import { refundWebhookObjectSchema } from '../refunds/wire.ts';
import { subscriptionWebhookObjectSchema } from '../subscriptions/wire.ts';

/** The schema of `content.object` for each `content.type`. */
export const WEBHOOK_OBJECT_SCHEMAS = {
  payment_details: paymentWebhookObjectSchema,
  refund_details: refundWebhookObjectSchema,
  dispute_details: disputeWebhookObjectSchema,
  mandate_details: mandateWebhookObjectSchema,
  payout_details: payoutWebhookObjectSchema,
  subscription_details: subscriptionWebhookObjectSchema,
} as const satisfies Record<ContentType, z.ZodType>;

type ObjectSchemaOf<C extends ContentType> = (typeof WEBHOOK_OBJECT_SCHEMAS)[C];

/** `payment_succeeded` → `PaymentSucceededEvent`: the title of its member, and so the name of its SDK type. */
export const eventTitle = (eventType: EventType) => `${eventType.replace(/(^|_)([a-z])/g, (_match, _separator, letter: string) => letter.toUpperCase())}Event`;

const envelopeFields = {
  merchant_id: z.string().describe('The merchant the event is for.'),
  event_id: z.string().describe('Stable across retries: acknowledge a duplicate without applying it again.'),
  timestamp: wireInstant().describe('When the event was recorded.'),
  processor_merchant_id: z
    .string()
    .nullable()
    .describe(
      "The merchant whose connector account processed the object, when not `merchant_id` (a platform's connected merchant, docs/platforms.md); null otherwise.",
    ),
};

function eventSchema<E extends EventType, C extends ContentType>(eventType: E, contentType: C) {
  return z
    .strictObject({
      merchant_id: envelopeFields.merchant_id,
      event_id: envelopeFields.event_id,
      event_type: z.literal(eventType),
      content: z.strictObject({ type: z.literal(contentType), object: WEBHOOK_OBJECT_SCHEMAS[contentType] as ObjectSchemaOf<C> }),
      timestamp: envelopeFields.timestamp,
      processor_merchant_id: envelopeFields.processor_merchant_id,
    })
    .meta({ title: eventTitle(eventType), description: `The \`${eventType}\` event: its content is a \`${contentType}\`.` });
}

/** Every event type's member, in catalog order. */
export const WEBHOOK_EVENT_MEMBER_SCHEMAS = EVENT_TYPES.map((eventType) => eventSchema(eventType, contentTypeOf(eventType)));

/** The body of every webhook: one of the 33 members, told apart by `event_type`. */
export const webhookEventSchema = z
  .discriminatedUnion('event_type', WEBHOOK_EVENT_MEMBER_SCHEMAS as [ReturnType<typeof eventSchema>, ...ReturnType<typeof eventSchema>[]])
  .meta({
    title: 'WebhookEvent',
    description: `The body of an outgoing webhook (docs/webhooks.md): the seed's six fields, \`content.type\` one of ${CONTENT_TYPES.join(', ')} as \`event_type\` says.`,
  });
