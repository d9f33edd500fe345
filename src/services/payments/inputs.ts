// Validation of the payments API's input: field-named errors, nothing written when any field is wrong.
import { z } from 'zod';
import { isConnectorName } from '../../connectors/registry.ts';
import { cardProblem, normaliseCardNumber } from '../../domain/cards.ts';
import { metadataProblem } from '../../domain/metadata.ts';
import { amountProblem, isCurrency } from '../../domain/money.ts';

const returnUrl = z
  .string()
  .max(2048, 'must be at most 2048 characters')
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'must be an absolute http(s) URL');

const card = z.object({
  number: z.string().max(40, 'must be at most 40 characters'),
  expiryMonth: z.number(),
  expiryYear: z.number(),
  cvc: z.string().max(8, 'must be at most 8 characters'),
  holderName: z.string().nullish(),
});

const paymentMethodData = z
  .object({ card: card.nullish() })
  .superRefine((value, context) => {
    if (!value.card) {
      context.addIssue({ code: 'custom', path: ['card'], message: 'card details are required (the only payment method available yet)' });
      return;
    }
    const problem = cardProblem(value.card, new Date());
    if (problem) context.addIssue({ code: 'custom', path: problem.field.split('.'), message: problem.message });
  })
  .transform((value) => ({ card: { ...value.card!, number: normaliseCardNumber(value.card!.number) } }));

export type PaymentMethodData = z.infer<typeof paymentMethodData>;

export const createPaymentInput = z
  .object({
    amount: z.number(),
    currency: z.string().transform((code) => code.toUpperCase()),
    captureMethod: z.enum(['AUTOMATIC', 'MANUAL']).nullish().transform((value) => value ?? 'AUTOMATIC'),
    authenticationType: z.enum(['THREE_DS', 'NO_THREE_DS']).nullish().transform((value) => value ?? 'NO_THREE_DS'),
    confirm: z.boolean().nullish(),
    customerId: z.string().min(1).max(64, 'must be at most 64 characters').nullish(),
    description: z.string().max(1000, 'must be at most 1000 characters').nullish(),
    metadata: z.unknown().nullish(),
    returnUrl: returnUrl.nullish(),
    paymentMethodData: paymentMethodData.nullish(),
    setupFutureUsage: z.enum(['OFF_SESSION', 'ON_SESSION']).nullish(),
    mandateId: z.null({ message: 'mandates are not available yet' }).optional(),
    profileId: z.string().nullish(),
    connectors: z
      .array(z.string().refine(isConnectorName, 'must be a known connector name'))
      .max(10, 'at most 10 connectors')
      .nullish(),
  })
  .superRefine((input, context) => {
    if (!isCurrency(input.currency)) {
      context.addIssue({ code: 'custom', path: ['currency'], message: `unknown currency ${input.currency} (ISO 4217 code expected)` });
      return;
    }
    const amount = amountProblem(input.amount, input.currency);
    if (amount) context.addIssue({ code: 'custom', path: ['amount'], message: amount });
    if (input.metadata != null) {
      const metadata = metadataProblem(input.metadata);
      if (metadata) context.addIssue({ code: 'custom', path: metadata.field.split('.'), message: metadata.message });
    }
    if (input.confirm && !input.paymentMethodData) {
      context.addIssue({ code: 'custom', path: ['paymentMethodData'], message: 'is required when confirm is true' });
    }
  });

export const confirmPaymentInput = z.object({
  clientSecret: z.string().max(200),
  paymentMethodData: paymentMethodData.nullish(),
  returnUrl: returnUrl.nullish(),
  savePaymentMethod: z.boolean().nullish(),
  paymentMethodId: z.null({ message: 'saved payment methods are not available yet' }).optional(),
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
  customerId: z.string().nullish(),
  createdAfter: z.date().nullish(),
  createdBefore: z.date().nullish(),
});
