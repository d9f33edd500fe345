// Validation of the payments API's input: field-named errors, nothing written when any field is wrong.
// `paymentMethodData` becomes the connector's PaymentMethod (exactly one of its kinds).
import { z } from 'zod';
import { isConnectorName } from '../connectors/index.ts';
import { customerId } from '../customers/index.ts';
import { methodTypeOf, type PaymentMethod } from '../connectors/port.ts';
import { ibanProblem, normaliseIban } from '../payouts/bank-accounts.ts';
import { cardProblem, normaliseCardNumber } from '../../kernel/cards.ts';
import { isCountry } from '../../kernel/countries.ts';
import { isPaymentMethodType, PAYMENT_METHOD_TYPES, supportsManualCapture } from './methods.ts';
import { EMAIL_PATTERN, paymentSearchOf, SEARCH_RULE } from './search.ts';
import { isCurrency } from '../../kernel/money.ts';
import { metadataProblem } from '../../kernel/metadata.ts';
import { checkMoney, currencyCode } from '../../kernel/validation.ts';

/** A marketplace basket's sellers: more than this is a data error, not a basket. */
const MAX_SPLITS = 20;

const returnUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'must be an absolute http(s) URL');

const card = z.object({
  number: z.string().max(40, 'must be at most 40 characters'),
  expiryMonth: z.number(),
  expiryYear: z.number(),
  cvc: z.string().max(8, 'must be at most 8 characters'),
  holderName: z.string().max(100, 'must be at most 100 characters').nullish(),
});

const provider = z.string().regex(/^[a-z0-9_]{1,40}$/, 'must be a provider name such as sandbox_pay');
const walletToken = z.object({ type: provider, paymentToken: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters') });

const paymentMethodData = z
  .object({
    card: card.nullish(),
    bankDebit: z
      .object({
        accountHolderName: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
        iban: z.string().max(64, 'must be at most 64 characters'),
      })
      .nullish(),
    wallet: walletToken.nullish(),
    payLater: walletToken.nullish(),
    bankRedirect: z.object({ bank: provider }).nullish(),
    bankTransfer: z.object({ type: z.enum(['sepa'], 'must be "sepa"').nullish() }).nullish(),
    crypto: z.object({ network: provider }).nullish(),
  })
  .superRefine((value, context) => {
    const given = Object.entries(value).filter(([, detail]) => detail != null);
    if (given.length !== 1) {
      context.addIssue({
        code: 'custom',
        path: [],
        message: `must hold exactly one of card, bankDebit, wallet, payLater, bankRedirect, bankTransfer, crypto (got ${given.length})`,
      });
      return;
    }
    if (value.card) {
      const problem = cardProblem(value.card, new Date());
      if (problem) context.addIssue({ code: 'custom', path: problem.field.split('.'), message: problem.message });
    }
    if (value.bankDebit) {
      const problem = ibanProblem(value.bankDebit.iban);
      if (problem) context.addIssue({ code: 'custom', path: ['bankDebit', 'iban'], message: problem });
    }
  })
  .transform((value): PaymentMethod => {
    if (value.card) return { type: 'card', card: { ...value.card, number: normaliseCardNumber(value.card.number) } };
    if (value.bankDebit) return { type: 'bank_debit', accountHolderName: value.bankDebit.accountHolderName, iban: normaliseIban(value.bankDebit.iban) };
    if (value.wallet) return { type: 'wallet', provider: value.wallet.type, paymentToken: value.wallet.paymentToken };
    if (value.payLater) return { type: 'pay_later', provider: value.payLater.type, paymentToken: value.payLater.paymentToken };
    if (value.bankRedirect) return { type: 'bank_redirect', bank: value.bankRedirect.bank };
    if (value.bankTransfer) return { type: 'bank_transfer' };
    return { type: 'crypto', network: value.crypto!.network };
  });

export const createPaymentInput = z
  .object({
    amount: z.number(),
    currency: currencyCode,
    captureMethod: z
      .enum(['AUTOMATIC', 'MANUAL'])
      .nullish()
      .transform((value) => value ?? 'AUTOMATIC'),
    authenticationType: z
      .enum(['THREE_DS', 'NO_THREE_DS'])
      .nullish()
      .transform((value) => value ?? 'NO_THREE_DS'),
    confirm: z.boolean().nullish(),
    customerId: customerId.nullish(),
    country: z.string().refine(isCountry, 'must be an ISO 3166-1 alpha-2 country code (upper case)').nullish(),
    email: z.string().max(254, 'must be at most 254 characters').regex(EMAIL_PATTERN, 'must be an email address such as ada@example.com').nullish(),
    description: z.string().max(1000, 'must be at most 1000 characters').nullish(),
    metadata: z.unknown().nullish(),
    returnUrl: returnUrl.nullish(),
    paymentMethodData: paymentMethodData.nullish(),
    setupFutureUsage: z.enum(['OFF_SESSION', 'ON_SESSION']).nullish(),
    mandateId: z.string().max(64).nullish(),
    profileId: z.string().nullish(),
    connectors: z.array(z.string().refine(isConnectorName, 'must be a known connector name')).max(10, 'at most 10 connectors').nullish(),
    applicationFeeAmount: z.number().nullish(),
    splits: z
      .array(z.object({ merchantId: z.string().max(64, 'must be at most 64 characters'), amount: z.number() }))
      .min(1, 'must hold at least one split when given')
      .max(MAX_SPLITS, `at most ${MAX_SPLITS} splits`)
      .nullish(),
  })
  .superRefine((input, context) => {
    if (!checkMoney(context, input.currency, { amount: input.amount })) return;
    splitProblems(input, context);
    if (input.metadata != null) {
      const metadata = metadataProblem(input.metadata);
      if (metadata) context.addIssue({ code: 'custom', path: metadata.field.split('.'), message: metadata.message });
    }
    if (input.mandateId) {
      // A merchant-initiated payment is confirmed at once with the mandate's card: nobody is there to confirm it later.
      if (input.paymentMethodData)
        context.addIssue({ code: 'custom', path: ['paymentMethodData'], message: 'cannot be combined with mandateId (the mandate names the card)' });
      if (!input.confirm)
        context.addIssue({ code: 'custom', path: ['confirm'], message: 'must be true with mandateId (a merchant-initiated payment is confirmed at once)' });
      if (input.setupFutureUsage)
        context.addIssue({ code: 'custom', path: ['setupFutureUsage'], message: 'cannot be combined with mandateId (the mandate already exists)' });
    } else if (input.confirm && !input.paymentMethodData) {
      context.addIssue({ code: 'custom', path: ['paymentMethodData'], message: 'is required when confirm is true' });
    }
    if (input.setupFutureUsage === 'OFF_SESSION' && !input.customerId) {
      context.addIssue({ code: 'custom', path: ['customerId'], message: 'is required with setupFutureUsage OFF_SESSION (the mandate is the customer’s)' });
    }
    const methodType = input.paymentMethodData ? methodTypeOf(input.paymentMethodData) : null;
    if (methodType && input.captureMethod === 'MANUAL' && !supportsManualCapture(methodType)) {
      context.addIssue({ code: 'custom', path: ['captureMethod'], message: `MANUAL is not available for ${methodType}, which settles later` });
    }
  });

/**
 * The fee and splits' own rules (docs/ledger.md): a fee of 0 up to the amount; each split a positive amount
 * to a merchant named once; the splits adding up to the amount less the fee. Whose merchants they may name
 * is the create use case's rule (it needs the platform).
 */
function splitProblems(
  input: { amount: number; currency: string; applicationFeeAmount?: number | null; splits?: { merchantId: string; amount: number }[] | null },
  context: z.RefinementCtx,
): void {
  const fee = input.applicationFeeAmount ?? 0;
  if (fee < 0) context.addIssue({ code: 'custom', path: ['applicationFeeAmount'], message: 'must not be negative' });
  else if (fee > 0) checkMoney(context, input.currency, { applicationFeeAmount: fee });
  if (fee > input.amount) context.addIssue({ code: 'custom', path: ['applicationFeeAmount'], message: `must not exceed amount (${input.amount})` });
  if (!input.splits) return;
  const named = new Set<string>();
  input.splits.forEach((split, index) => {
    checkMoney(context, input.currency, { [`splits.${index}.amount`]: split.amount });
    if (named.has(split.merchantId)) context.addIssue({ code: 'custom', path: ['splits', index, 'merchantId'], message: 'names a merchant a second time' });
    named.add(split.merchantId);
  });
  const total = input.splits.reduce((sum, split) => sum + split.amount, 0);
  if (total !== input.amount - fee) {
    context.addIssue({
      code: 'custom',
      path: ['splits'],
      message: `amounts must add up to amount less applicationFeeAmount (${input.amount - fee}), not ${total}`,
    });
  }
}

export const confirmPaymentInput = z
  .object({
    clientSecret: z.string().max(200),
    paymentMethodData: paymentMethodData.nullish(),
    returnUrl: returnUrl.nullish(),
    savePaymentMethod: z.boolean().nullish(),
    paymentMethodId: z.string().max(64).nullish(),
    cardCvc: z
      .string()
      .regex(/^\d{3,4}$/, 'must be 3 or 4 digits')
      .nullish(),
  })
  .superRefine((input, context) => {
    if (input.paymentMethodId && input.paymentMethodData) {
      context.addIssue({ code: 'custom', path: ['paymentMethodId'], message: 'cannot be combined with paymentMethodData' });
    }
    if (input.paymentMethodId && !input.cardCvc) context.addIssue({ code: 'custom', path: ['cardCvc'], message: 'is required with a saved card' });
    if (input.savePaymentMethod && input.paymentMethodData && input.paymentMethodData.type !== 'card') {
      context.addIssue({ code: 'custom', path: ['savePaymentMethod'], message: 'only cards can be saved' });
    }
  });

export const capturePaymentInput = z.object({
  paymentId: z.string(),
  amountToCapture: z.number().int('must be an integer number of minor units').nullish(),
});

export const cancelPaymentInput = z.object({
  paymentId: z.string(),
  cancellationReason: z.string().max(255, 'must be at most 255 characters').nullish(),
});

export const listPaymentsInput = z.object({
  first: z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100').nullish(),
  after: z.string().nullish(),
  status: z.string().nullish(),
  customerId: customerId.nullish(),
  createdAfter: z.date().nullish(),
  createdBefore: z.date().nullish(),
  search: z
    .string()
    .max(200, 'must be at most 200 characters')
    .transform((text, context) => {
      const search = paymentSearchOf(text);
      if (search === null) context.addIssue({ code: 'custom', message: SEARCH_RULE });
      return search ?? z.NEVER;
    })
    .nullish(),
  connector: z.string().refine(isConnectorName, 'must be a known connector name').nullish(),
  paymentMethod: z
    .string()
    .refine(isPaymentMethodType, `must be one of ${PAYMENT_METHOD_TYPES.join(', ')}`)
    .nullish(),
  currency: currencyCode.refine(isCurrency, 'must be an ISO 4217 currency code such as USD').nullish(),
});
