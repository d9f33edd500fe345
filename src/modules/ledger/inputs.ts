// Validation of the ledger's arguments: field-named errors.
import { z } from 'zod';
import { currencyCode } from '../../kernel/validation.ts';

export const ledgerEntriesInput = z.object({
  first: z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100').nullish(),
  after: z.string().nullish(),
  currency: currencyCode.nullish(),
  paymentId: z.string().nullish(),
});
