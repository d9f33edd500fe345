// A stack pointed at the local fake of Stripe's API (test/fakes/stripe), and a merchant with a Stripe test
// account there: what every Stripe end-to-end test starts from.
import { randomBytes } from 'node:crypto';
import { CreateConnectorAccountDocument } from '../gql/graphql.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe/server.ts';
import { createMerchant } from './api.ts';
import { dataOf } from './graphql-client.ts';
import { startStack, type Stack } from './stack.ts';

/** A Stripe secret key of `mode`, of the shape Stripe gives. */
export const stripeKey = (mode: 'test' | 'live' = 'test') => `sk_${mode}_${randomBytes(12).toString('hex')}`;

export type StripeShop = Awaited<ReturnType<typeof createMerchant>> & { connectorAccountId: string };

export async function startStripeShop(): Promise<{ fake: FakeStripe; stack: Stack; shop: StripeShop; close: () => Promise<void> }> {
  const fake = await startFakeStripe();
  const stack = await startStack({ worker: false, env: { STRIPE_API_BASE: fake.url } });
  const merchant = await createMerchant(stack.api);
  const account = dataOf(
    await merchant.secret(CreateConnectorAccountDocument, {
      // Registering the endpoint at Stripe replaces this secret with the one Stripe makes.
      input: { connectorName: 'stripe', credentials: { apiKey: stripeKey() }, webhookSecret: 'whsec_placeholder_until_registered' },
    }),
  ).createConnectorAccount;
  return {
    fake,
    stack,
    shop: { ...merchant, connectorAccountId: account.id },
    close: async () => {
      await stack.close();
      await fake.close();
    },
  };
}
