import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, expectTypeOf, it } from 'vitest';
import type { RefundWebhookObject, SubscriptionWebhookObject, WebhookEvent } from '@payments-orchestrator/node';
import { EVENT_SCHEMA_FILE, SCHEMAS_DIRECTORY, generatedWebhookFiles, objectSchemaFile, webhookJsonSchemas } from '../../scripts/webhook-schemas.ts';
import { EVENT_TYPES, contentTypeOf, type EventType } from '../../src/modules/events/catalog.ts';

it('packages/node/schemas/*.json and the SDK’s webhook types are what the wire schemas generate (run `npm run generate:webhook-schemas` after changing a wire.ts)', async () => {
  const files = await generatedWebhookFiles();
  for (const [url, content] of files) expect(readFileSync(url, 'utf8'), fileURLToPath(url)).toBe(content);
  // No schema left over from an object that is gone.
  const generated = [...files.keys()].map((url) => url.href);
  for (const file of readdirSync(SCHEMAS_DIRECTORY)) expect(generated).toContain(new URL(file, SCHEMAS_DIRECTORY).href);
});

it('publishes one member per event type, whose content.type is the catalog’s and whose object is that content type’s schema', () => {
  const schemas = webhookJsonSchemas();
  const members = (schemas[EVENT_SCHEMA_FILE] as { oneOf: EventMember[] }).oneOf;
  expect(members.map((member) => member.properties.event_type.const)).toEqual([...EVENT_TYPES]);
  for (const member of members) {
    const contentType = contentTypeOf(member.properties.event_type.const);
    expect(member.properties.content.properties.type.const, member.title).toBe(contentType);
    expect(member.properties.content.properties.object.$ref, member.title).toBe(schemas[objectSchemaFile(contentType)]!.$id);
  }
});

interface EventMember {
  title: string;
  properties: { event_type: { const: EventType }; content: { properties: { type: { const: string }; object: { $ref: string } } } };
}

// The SDK's generated types say the same, checked by the compiler (npx tsc).
type ContentOf<E extends EventType> = Extract<WebhookEvent, { event_type: E }>['content'];
expectTypeOf<ContentOf<'invoice_paid'>>().toEqualTypeOf<{ type: 'subscription_details'; object: SubscriptionWebhookObject }>();
expectTypeOf<ContentOf<'surcharge_refund_succeeded'>>().toEqualTypeOf<{ type: 'refund_details'; object: RefundWebhookObject }>();
expectTypeOf<ContentOf<'action_required'>['type']>().toEqualTypeOf<'payment_details'>();
expectTypeOf<WebhookEvent['event_type']>().toEqualTypeOf<EventType>();
