// What the payouts API accepts: validated by the service, and the shape of its GraphQL inputs (schema.ts).
import { z } from 'zod';
import type { PayoutDestination } from '../connectors/port.ts';
import { CONNECTORS, isConnectorName } from '../connectors/index.ts';
import { ibanProblem, normaliseIban } from './bank-accounts.ts';
import { cardWithoutCvcProblem, normaliseCardNumber } from '../../kernel/cards.ts';
import { isCountry } from '../../kernel/countries.ts';
import { isId } from '../../kernel/ids.ts';
import { PAYOUT_STATUSES } from './machine.ts';
import { checkMoney, currencyCode } from '../../kernel/validation.ts';

const destinationInput = z
  .object({
    card: z
      .object({
        number: z.string().max(40, 'must be at most 40 characters'),
        expiryMonth: z.number(),
        expiryYear: z.number(),
        holderName: z.string().max(100, 'must be at most 100 characters').nullish(),
      })
      .nullish(),
    bankAccount: z
      .object({
        accountHolderName: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
        iban: z.string().max(64, 'must be at most 64 characters'),
      })
      .nullish(),
  })
  .superRefine((value, context) => {
    if ((value.card == null) === (value.bankAccount == null)) {
      context.addIssue({ code: 'custom', path: [], message: 'must hold exactly one of card, bankAccount' });
      return;
    }
    const problem = value.card
      ? cardWithoutCvcProblem(value.card, new Date())
      : (({ iban }) => (ibanProblem(iban) ? { field: 'bankAccount.iban', message: ibanProblem(iban)! } : null))(value.bankAccount!);
    if (problem) context.addIssue({ code: 'custom', path: problem.field.split('.'), message: problem.message });
  })
  .transform((value): PayoutDestination =>
    value.card
      ? { type: 'card', card: { ...value.card, number: normaliseCardNumber(value.card.number) } }
      : { type: 'bank_account', accountHolderName: value.bankAccount!.accountHolderName, iban: normaliseIban(value.bankAccount!.iban) },
  );

export const createPayoutInput = z
  .object({
    amount: z.number(),
    currency: currencyCode,
    destination: destinationInput,
    country: z.string().refine(isCountry, 'must be an ISO 3166-1 alpha-2 country code (upper case)').nullish(),
    description: z.string().max(500, 'must be at most 500 characters').nullish(),
    profileId: z.string().nullish(),
    connector: z
      .string()
      .refine(isConnectorName, `must be one of: ${Object.keys(CONNECTORS).join(', ')}`)
      .nullish(),
  })
  .superRefine((input, context) => void checkMoney(context, input.currency, { amount: input.amount }));

export const listPayoutsInput = z.object({
  status: z.enum(PAYOUT_STATUSES).nullish(),
  first: z.number().int().min(1, 'must be 1 to 100').max(100, 'must be 1 to 100').nullish(),
});

export const payoutIdInput = z.object({ payoutId: z.string().refine((value) => isId('payout', value), 'must be a payout id (po_…)') });
