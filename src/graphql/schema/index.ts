// Imports every domain's types, then builds the schema. Exports nothing but the schema.
import './scalars.ts';
import './api-key.ts';
import './business-profile.ts';
import './merchant.ts';
import './connector-account.ts';
import './customer.ts';
import './payment-method.ts';
import './payment.ts';
import './refund.ts';
import './dispute.ts';
import './mandate.ts';
import './payout.ts';
import './recurring-subscription.ts';
import './payment-link.ts';
import './event.ts';
import './activity.ts';
import { builder } from '../builder.ts';

export const schema = builder.toSchema();
