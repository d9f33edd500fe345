// A payout in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { z } from 'zod';
import { PAYOUT_STATUSES, type PayoutStatus } from './machine.ts';
import { changeFields, changeFieldsSchema, ownerFields, ownerFieldsSchema, wireEnum, wireEnumValues } from '../events/wire.ts';

export const payoutWebhookObjectSchema = z
  .strictObject({
    payout_id: z.string(),
    ...ownerFieldsSchema,
    status: z.enum(wireEnumValues(PAYOUT_STATUSES)),
    amount: z.number().int().describe('In minor units of `currency`.'),
    currency: z.string().describe('ISO 4217 code.'),
    payout_type: z.enum(['card', 'bank']),
    destination: z
      .strictObject({ type: z.string().describe('card, or the bank account kind.'), last4: z.string() })
      .describe('Where the money goes: never the card number or IBAN.'),
    country: z.string().nullable(),
    description: z.string().nullable(),
    connector: z.string().nullable(),
    connector_payout_id: z.string().nullable().describe("The processor's id of the payout."),
    error_code: z.string().nullable(),
    error_message: z.string().nullable(),
    ...changeFieldsSchema,
  })
  .meta({ title: 'PayoutWebhookObject', description: 'A payout: `content.object` when `content.type` is `payout_details`.' });
export type PayoutWebhookObject = z.infer<typeof payoutWebhookObjectSchema>;

/** What the payout wire shape reads of a payout (structurally the database row). */
export interface PayoutFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: PayoutStatus;
  amount: number;
  currency: string;
  country: string | null;
  description: string | null;
  destinationType: string;
  destinationLast4: string;
  connectorName: string | null;
  connectorPayoutId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A payout in `content.object` (Hyperswitch's PayoutCreateResponse is the model): never the card number or IBAN. */
export function payoutWireObject(payout: PayoutFields): PayoutWebhookObject {
  return {
    payout_id: payout.id,
    ...ownerFields(payout),
    status: wireEnum(payout.status),
    amount: payout.amount,
    currency: payout.currency,
    payout_type: payout.destinationType === 'card' ? ('card' as const) : ('bank' as const),
    destination: { type: payout.destinationType, last4: payout.destinationLast4 },
    country: payout.country,
    description: payout.description,
    connector: payout.connectorName,
    connector_payout_id: payout.connectorPayoutId,
    error_code: payout.errorCode,
    error_message: payout.errorMessage,
    ...changeFields(payout),
  };
}
