// Imports every domain's types, then builds the schema. Exports nothing but the schema.
import '../platform/graphql/scalars.ts';
import '../modules/merchants/key-schema.ts';
import '../modules/merchants/profile-schema.ts';
import '../modules/merchants/schema.ts';
import '../modules/connectors/schema.ts';
import '../modules/customers/schema.ts';
import '../modules/payments/methods-schema.ts';
import '../modules/payments/schema.ts';
import '../modules/refunds/schema.ts';
import '../modules/ledger/schema.ts';
import '../modules/disputes/schema.ts';
import '../modules/mandates/schema.ts';
import '../modules/payouts/schema.ts';
import '../modules/subscriptions/schema.ts';
import '../modules/payment-links/schema.ts';
import '../modules/events/schema.ts';
import '../modules/events/activity-schema.ts';
import '../modules/routing/schema.ts';
import '../modules/team/schema.ts';
import { builder } from '../platform/graphql/builder.ts';

export const schema = builder.toSchema();
