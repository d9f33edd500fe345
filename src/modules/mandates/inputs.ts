// What the mandates API accepts: validated by the service, and the shape of its GraphQL input (schema.ts).
import { z } from 'zod';
import { isId } from '../../kernel/ids.ts';

export const mandateIdInput = z.object({ mandateId: z.string().refine((value) => isId('mandate', value), 'must be a mandate id (man_…)') });
