// The conventions every resource's webhook wire shape (`content.object`) follows, each module's wire.ts
// writing its own: snake_case, statuses as snake_case strings, amounts in minor units, instants in ISO 8601.
// Every shape carries `updated` so receivers apply only a newer state (the seed's receiver obligations), and
// `version`, which orders changes of the same instant.
// Each wire.ts states its shape once, as a zod schema: the builder's return type is inferred from it (the
// compiler catches a drift), and scripts/webhook-schemas.ts publishes it as JSON Schema for the server SDK
// (docs/webhooks.md). The service never parses its own bodies with them: the hot path only serializes.
import { z } from 'zod';

/** An enum value as the wire writes it (`REQUIRES_CAPTURE` → `requires_capture`), typed as such. */
export const wireEnum = <S extends string>(value: S): Lowercase<S> => value.toLowerCase() as Lowercase<S>;

/** The wire values of an enum's list, each after `prefix`, for a schema's `z.enum`. */
export function wireEnumValues<const S extends readonly [string, ...string[]], P extends string = ''>(
  values: S,
  prefix: P = '' as P,
): { [K in keyof S]: `${P}${Lowercase<S[K]>}` } {
  return values.map((value) => `${prefix}${wireEnum(value)}`) as { [K in keyof S]: `${P}${Lowercase<S[K]>}` };
}

/** An instant on the wire: ISO 8601 in UTC with milliseconds (`Date.toISOString`). */
export const wireInstant = () => z.iso.datetime({ precision: 3 });

export const changeFieldsSchema = {
  created: wireInstant().describe('When the resource was created.'),
  updated: wireInstant().describe('When the resource last changed: apply an event only if this is newer than the state you stored.'),
  version: z.number().int().nonnegative().describe('Orders two changes of the same millisecond: higher is newer.'),
};

/** When a resource was created and last changed, and the version that orders its changes: every wire shape ends with them. */
export function changeFields(resource: { createdAt: Date; updatedAt: Date; version: number }) {
  return { created: resource.createdAt.toISOString(), updated: resource.updatedAt.toISOString(), version: resource.version };
}

export const ownerFieldsSchema = {
  merchant_id: z.string().describe('The merchant account the resource belongs to.'),
  profile_id: z.string().describe('The business profile the resource belongs to.'),
  livemode: z.boolean().describe('True in live mode, false in test mode.'),
};

/** Who a resource belongs to, as every wire shape carries it. */
export function ownerFields(resource: { merchantId: string; profileId: string; mode: string }) {
  return { merchant_id: resource.merchantId, profile_id: resource.profileId, livemode: resource.mode === 'LIVE' };
}

/** A card as wire shapes show it: never its number. */
export const wireCardSchema = z
  .object({
    brand: z.string().nullable().describe('The card network, lowercase (visa, mastercard, ...).'),
    last4: z.string().nullable().describe('The last four digits of the card number.'),
    exp_month: z.number().int().nullable(),
    exp_year: z.number().int().nullable(),
  })
  .describe('A card, without its number.');
