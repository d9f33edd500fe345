import { AppError } from '../../kernel/errors.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { connectionOf } from '../../platform/graphql/connections.ts';

const BalanceRef = builder.simpleObject('Balance', {
  description: 'A merchant’s money in one currency (docs/ledger.md), in the currency’s minor unit.',
  fields: (t) => ({
    currency: t.string(),
    available: t.field({ type: 'SafeInt', description: 'What payouts and refunds may take now.' }),
    pending: t.field({
      type: 'SafeInt',
      description: 'Captured, not yet settled by its processor: available from the date it reported.',
    }),
  }),
});

const LedgerEntryRef = builder.prismaObject('LedgerEntry', {
  description: 'One row of the ledger: a credit (positive) or debit of a merchant’s balance (docs/ledger.md).',
  fields: (t) => ({
    id: t.exposeID('id'),
    transactionId: t.exposeString('transactionId', { description: 'The movement it is part of: its rows, the processor side’s included, add up to zero.' }),
    type: t.exposeString('type', { description: 'capture, refund, dispute or payout.' }),
    role: t.exposeString('role', { description: 'merchant (its own share, or its payout), application_fee or split.' }),
    sourceId: t.exposeString('sourceId', { description: 'The payment, refund, dispute or payout that moved the money.' }),
    paymentId: t.exposeString('paymentId', { nullable: true }),
    currency: t.exposeString('currency'),
    amount: t.expose('amount', { type: 'SafeInt', description: 'Signed, in minor units: positive credits the merchant.' }),
    availableAt: t.expose('availableAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const LedgerEntryConnection = connectionOf('LedgerEntry', LedgerEntryRef);

/** A merchant's money is its own and its platform's to see: the key's merchant, or one connected to it. */
function readableBy(principal: SecretKeyPrincipal, merchant: { id: string; platformMerchantId: string | null }): string {
  if (merchant.id === principal.merchantId || merchant.platformMerchantId === principal.merchantId) return merchant.id;
  throw new AppError('FORBIDDEN', 'A merchant’s balance and ledger are for its own secret key and its platform’s.');
}

builder.prismaObjectFields('MerchantAccount', (t) => ({
  balance: t.withAuth({ secretKey: true }).field({
    type: [BalanceRef],
    description: 'The merchant’s balance in each currency it has ledger entries in, in the key’s mode (docs/ledger.md).',
    resolve: (merchant, _args, { principal, services }) => services.ledger.balances(principal, readableBy(principal, merchant)),
  }),
  ledgerEntries: t.withAuth({ secretKey: true }).field({
    type: LedgerEntryConnection,
    description: 'The merchant’s ledger entries in the key’s mode, newest first.',
    args: {
      first: t.arg.int({ description: '1 to 100; 20 by default.' }),
      after: t.arg.string(),
      currency: t.arg.string(),
      paymentId: t.arg.string({ description: 'Only the entries of this payment (its capture, refunds and disputes).' }),
    },
    resolve: (merchant, args, { principal, services }) => services.ledger.entries(principal, readableBy(principal, merchant), args),
  }),
}));
