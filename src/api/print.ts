import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './schema.ts';

/** The SDL of the schema, sorted, as checked in at schema.graphql. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
