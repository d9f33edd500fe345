// Adyen's published OpenAPI documents (Checkout API v71 and its webhooks; MIT, LICENSE-adyen-openapi beside them)
// as JSON Schema validators: the fake checks every request against them, so what our connector sends is judged
// by Adyen's own definition, not ours.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const load = (file: string) =>
  JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as Record<string, unknown> & {
    paths: Record<string, Record<string, Operation>>;
    webhooks: Record<string, Record<string, Operation>>;
  };

interface Operation {
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// OpenAPI's number formats, which JSON Schema does not define: the schema's own type and bounds apply.
for (const format of ['int32', 'int64', 'float', 'double']) ajv.addFormat(format, true);

const checkout = load('./adyen-CheckoutService-v71.json');
const webhooks = load('./adyen-Webhooks-v1.json');
ajv.addSchema({ ...checkout, $id: 'adyen-checkout' });
ajv.addSchema({ ...webhooks, $id: 'adyen-webhooks' });

const compiled = new Map<string, ValidateFunction>();
function validatorOf(document: string, ref: string): ValidateFunction {
  const key = `${document}${ref}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: key });
    compiled.set(key, validate);
  }
  return validate;
}

/** The errors of `body` as the request body of the Checkout operation `POST {template}`; [] when it validates. */
export function checkoutRequestErrors(template: string, body: unknown): string[] {
  const ref = checkout.paths[template]?.post?.requestBody?.content?.['application/json']?.schema?.$ref;
  if (ref === undefined) return [`no operation POST ${template} in Checkout API v71`];
  return errorsOf(validatorOf('adyen-checkout', ref), body);
}

/** The errors of `body` as the standard notification of `eventCode` (the webhooks document's request of that event). */
export function notificationErrors(eventCode: string, body: unknown): string[] {
  const ref = webhooks.webhooks[`/${eventCode}`]?.post?.requestBody?.content?.['application/json']?.schema?.$ref;
  if (ref === undefined) return [`no notification ${eventCode} in the webhooks document`];
  return errorsOf(validatorOf('adyen-webhooks', ref), body);
}

function errorsOf(validate: ValidateFunction, body: unknown): string[] {
  return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}
