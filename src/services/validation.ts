// Runs a zod schema over service input and turns the first issue into INVALID_INPUT naming the field.
import type { z } from 'zod';
import { invalidInput } from '../domain/errors.ts';

export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.infer<Schema> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw invalidInput(issue.path.map(String).join('.') || '(input)', issue.message);
}
