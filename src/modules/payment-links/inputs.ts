// What the payment links API accepts: validated by the service, and the shape of its GraphQL input (schema.ts).
import { z } from 'zod';
import { checkMoney, currencyCode } from '../../kernel/validation.ts';

const MAX_EXPIRY_SECONDS = 30 * 24 * 60 * 60;

export const createPaymentLinkInput = z
  .object({
    currency: currencyCode,
    amount: z.number().nullish(),
    minAmount: z.number().nullish(),
    maxAmount: z.number().nullish(),
    description: z.string().max(500, 'must be at most 500 characters').nullish(),
    expiresInSeconds: z
      .number()
      .int('must be whole seconds')
      .min(60, `must be 60 to ${MAX_EXPIRY_SECONDS} (30 days)`)
      .max(MAX_EXPIRY_SECONDS, `must be 60 to ${MAX_EXPIRY_SECONDS} (30 days)`)
      .nullish(),
    profileId: z.string().nullish(),
  })
  .superRefine((input, context) => {
    const fixed = input.amount != null;
    const chosen = input.minAmount != null || input.maxAmount != null;
    if (fixed === chosen) {
      context.addIssue({ code: 'custom', path: ['amount'], message: 'give either amount, or minAmount and maxAmount for an amount the customer chooses' });
      return;
    }
    if (!checkMoney(context, input.currency, { amount: input.amount, minAmount: input.minAmount, maxAmount: input.maxAmount })) return;
    if (chosen && (input.minAmount == null || input.maxAmount == null)) {
      context.addIssue({
        code: 'custom',
        path: [input.minAmount == null ? 'minAmount' : 'maxAmount'],
        message: 'is required with an amount the customer chooses',
      });
    } else if (chosen && input.minAmount! > input.maxAmount!) {
      context.addIssue({ code: 'custom', path: ['maxAmount'], message: 'must not be less than minAmount' });
    }
  });

export const payInput = z.object({ amount: z.number().int('must be a whole number of minor units').nullish() }).strict();
