// What the disputes API accepts: validated by the service, and the shape of its GraphQL inputs (schema.ts).
import { z } from 'zod';
import { isId } from '../../kernel/ids.ts';
import { DISPUTE_STATUSES } from './machine.ts';

export const disputeIdInput = z.object({ disputeId: z.string().refine((value) => isId('dispute', value), 'must be a dispute id (dis_…)') });

export const listDisputesInput = z.object({
  paymentId: z.string().max(64).nullish(),
  status: z.enum(DISPUTE_STATUSES).nullish(),
  first: z.number().int().min(1, 'must be 1 to 100').max(100, 'must be 1 to 100').nullish(),
});

export const challengeDisputeInput = disputeIdInput.extend({ evidence: z.unknown() });
