// A mandate in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { snakeCaseStatus } from '../payments/machine/statuses.ts';
import { changeFields, ownerFields } from '../events/wire.ts';

/** What the mandate wire shape reads of a mandate and its saved card (structurally the database rows). */
export interface MandateFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  customerId: string;
  paymentId: string;
  status: string;
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
export function mandateWireObject(mandate: MandateFields): Record<string, unknown> {
  const card = mandate.savedPaymentMethod;
  return {
    mandate_id: mandate.id,
    ...ownerFields(mandate),
    status: snakeCaseStatus(mandate.status),
    customer_id: mandate.customerId,
    payment_id: mandate.paymentId,
    payment_method_id: card.id,
    payment_method: 'card',
    card: { brand: card.cardBrand?.toLowerCase() ?? null, last4: card.cardLast4, exp_month: card.cardExpiryMonth, exp_year: card.cardExpiryYear },
    connector_account_id: card.connectorAccountId,
    revoked_at: mandate.revokedAt?.toISOString() ?? null,
    ...changeFields(mandate),
  };
}
