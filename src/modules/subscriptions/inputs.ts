// What the subscriptions API accepts: validated by the service, and the shape of its GraphQL inputs (schema.ts).
import { z } from 'zod';
import { isId } from '../../kernel/ids.ts';
import { INTERVAL_UNITS } from './machine.ts';
import { customerId as customerIdSchema } from '../customers/index.ts';
import { checkMoney, currencyCode } from '../../kernel/validation.ts';

export const createSubscriptionInput = z
  .object({
    customerId: customerIdSchema,
    mandateId: z.string().max(64),
    amount: z.number(),
    currency: currencyCode,
    interval: z.enum(INTERVAL_UNITS),
    intervalCount: z.number().int('must be a whole number').min(1, 'must be 1 to 12').max(12, 'must be 1 to 12').nullish(),
    startAt: z.date().nullish(),
  })
  .superRefine((input, context) => void checkMoney(context, input.currency, { amount: input.amount }));

export const subscriptionIdInput = z.object({ subscriptionId: z.string().refine((value) => isId('subscription', value), 'must be a subscription id (sub_…)') });
