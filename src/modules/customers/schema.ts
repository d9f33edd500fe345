// Customers (the merchant's own `cus_…` ids) and their saved cards.
import { builder } from '../../platform/graphql/builder.ts';

export const SavedPaymentMethodRef = builder.prismaObject('SavedPaymentMethod', {
  description: 'A saved card: confirm with its id (paymentMethodId) and the CVC. The number is never stored; the processor keeps a token.',
  fields: (t) => ({
    id: t.exposeID('id'),
    customerId: t.exposeString('customerId'),
    connector: t.string({ select: { connectorAccount: { select: { connectorName: true } } }, resolve: (saved) => saved.connectorAccount.connectorName }),
    brand: t.exposeString('cardBrand', { nullable: true }),
    last4: t.exposeString('cardLast4', { nullable: true }),
    expiryMonth: t.exposeInt('cardExpiryMonth', { nullable: true }),
    expiryYear: t.exposeInt('cardExpiryYear', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
  }),
});

const Customer = builder.simpleObject('Customer', {
  fields: (t) => ({ id: t.string(), savedPaymentMethods: t.field({ type: [SavedPaymentMethodRef] }) }),
});

builder.queryField('customer', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: Customer,
    description: 'A customer of the merchant, with its saved cards.',
    args: { id: t.arg.string({ required: true }) },
    resolve: (_root, { id }, { principal, services }) => services.customers.get(principal, id),
  }),
);
