// The server SDK's published webhook JSON Schemas (packages/node/schemas, docs/webhooks.md) as a validator:
// read from the files a merchant gets, not from the zod schemas they are generated from.
import { readFileSync, readdirSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const SCHEMAS = new URL('../../packages/node/schemas/', import.meta.url);

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats.default(ajv);
const schemas = readdirSync(SCHEMAS).map((file) => JSON.parse(readFileSync(new URL(file, SCHEMAS), 'utf8')) as EventSchema);
for (const schema of schemas) ajv.addSchema(schema);
const eventSchema = schemas.find((schema) => schema.$id.endsWith('/webhook-event.json'))!;
const validateEvent = ajv.getSchema(eventSchema.$id)!;

interface EventSchema {
  $id: string;
  oneOf?: { properties: { event_type: { const: string } } }[];
}

/**
 * What the published schemas find wrong with a webhook body, as `path message` lines; [] when it validates.
 * Reported against the member of its `event_type`, whose errors say what is wrong (the other 32 all fail on `event_type`).
 */
export function webhookBodyErrors(body: { event_type?: unknown }): string[] {
  if (validateEvent(body)) return [];
  const member = eventSchema.oneOf!.findIndex((candidate) => candidate.properties.event_type.const === body.event_type);
  const validate = member === -1 ? validateEvent : ajv.compile({ $ref: `${eventSchema.$id}#/oneOf/${member}` });
  validate(body);
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}
