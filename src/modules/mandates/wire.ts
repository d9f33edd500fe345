// A mandate in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { z } from 'zod';
import { MANDATE_STATUSES, type MandateStatus } from './machine.ts';
import { changeFields, changeFieldsSchema, ownerFields, ownerFieldsSchema, wireCardSchema, wireEnum, wireEnumValues, wireInstant } from '../events/wire.ts';

export const mandateWebhookObjectSchema = z
  .strictObject({
    mandate_id: z.string(),
    ...ownerFieldsSchema,
    status: z.enum(wireEnumValues(MANDATE_STATUSES)),
    customer_id: z.string(),
    payment_id: z.string().describe('The payment that set the mandate up.'),
    payment_method_id: z.string().describe('The saved payment method the mandate charges.'),
    payment_method: z.literal('card'),
    card: wireCardSchema,
    connector_account_id: z.string().describe('The connector account that holds the saved card.'),
    revoked_at: wireInstant().nullable(),
    ...changeFieldsSchema,
  })
  .meta({ title: 'MandateWebhookObject', description: "A mandate (never the processor's token): `content.object` when `content.type` is `mandate_details`." });
export type MandateWebhookObject = z.infer<typeof mandateWebhookObjectSchema>;

/** What the mandate wire shape reads of a mandate and its saved card (structurally the database rows). */
export interface MandateFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  customerId: string;
  paymentId: string;
  status: MandateStatus;
  revokedAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  savedPaymentMethod: {
    id: string;
    connectorAccountId: string;
    cardBrand: string | null;
    cardLast4: string | null;
    cardExpiryMonth: number | null;
    cardExpiryYear: number | null;
  };
}

/** A mandate in `content.object` (Hyperswitch's MandateResponse is the model): never the processor's token. */
export function mandateWireObject(mandate: MandateFields): MandateWebhookObject {
  const card = mandate.savedPaymentMethod;
  return {
    mandate_id: mandate.id,
    ...ownerFields(mandate),
    status: wireEnum(mandate.status),
    customer_id: mandate.customerId,
    payment_id: mandate.paymentId,
    payment_method_id: card.id,
    payment_method: 'card' as const,
    card: { brand: card.cardBrand?.toLowerCase() ?? null, last4: card.cardLast4, exp_month: card.cardExpiryMonth, exp_year: card.cardExpiryYear },
    connector_account_id: card.connectorAccountId,
    revoked_at: mandate.revokedAt?.toISOString() ?? null,
    ...changeFields(mandate),
  };
}
