// Runs a zod schema over service input and turns the first issue into INVALID_INPUT naming the field.
import { z } from 'zod';
import { invalidInput } from './errors.ts';
import { amountProblem, isCurrency, normaliseCurrencyCode } from './money.ts';

export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.infer<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw invalidInput(issue.path.map(String).join('.') || '(input)', issue.message);
}

/**
 * A currency code as a merchant may send it, upper-cased letter by ASCII letter ("usd" is USD, "uſd" stays
 * unknown). Whether it is an ISO 4217 code is checkMoney's rule (or the caller's own refine).
 */
export const currencyCode = z.string().transform(normaliseCurrencyCode);

/**
 * In a zod superRefine: the currency must be an ISO 4217 code, and each given amount valid in its minor
 * units (issues name `currency` or the amount's field). False when the currency is unknown.
 */
export function checkMoney(context: z.RefinementCtx, currency: string, amounts: Record<string, number | null | undefined>): boolean {
  if (!isCurrency(currency)) {
    context.addIssue({ code: 'custom', path: ['currency'], message: `unknown currency ${currency} (ISO 4217 code expected)` });
    return false;
  }
  for (const [field, amount] of Object.entries(amounts)) {
    const problem = amount == null ? null : amountProblem(amount, currency);
    if (problem) context.addIssue({ code: 'custom', path: [field], message: problem });
  }
  return true;
}
