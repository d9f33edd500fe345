// What the refunds API accepts: validated by the service, and the shape of its GraphQL input (schema.ts).
import { z } from 'zod';
import { isId } from '../../kernel/ids.ts';

export const createRefundInput = z.object({
  paymentId: z.string().refine((value) => isId('payment', value), 'must be a payment id (pay_…)'),
  amount: z.number().int('must be a whole number of minor units').min(1, 'must be at least 1').nullish(),
  reason: z.string().trim().min(1, 'must not be empty').max(255, 'must be at most 255 characters').nullish(),
});
