// A payout in its webhook wire shape (`content.object`), as events/wire.ts sets out.
import { snakeCaseStatus } from '../payments/machine/statuses.ts';
import { changeFields, ownerFields } from '../events/wire.ts';

/** What the payout wire shape reads of a payout (structurally the database row). */
export interface PayoutFields {
  id: string;
  merchantId: string;
  profileId: string;
  mode: string;
  status: string;
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
export function payoutWireObject(payout: PayoutFields): Record<string, unknown> {
  return {
    payout_id: payout.id,
    ...ownerFields(payout),
    status: snakeCaseStatus(payout.status),
    amount: payout.amount,
    currency: payout.currency,
    payout_type: payout.destinationType === 'card' ? 'card' : 'bank',
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
