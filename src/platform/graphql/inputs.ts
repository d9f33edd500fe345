// GraphQL inputs declared against the zod schema their service validates them with (the module's inputs.ts).
// The schema is the one definition of what an input holds: the GraphQL fields must be exactly its keys, each
// of the same kind (string, number, boolean, date, list) and nullable only where the schema allows null, or
// the build fails (tsc), so a field cannot be added to one and forgotten in the other. Finer rules (formats,
// enums, ranges, JSON) are the schema's, which the services run: they also serve REST and jobs.
import type { z } from 'zod';
import { builder } from './builder.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

type Kind<Value> = Value extends string
  ? string
  : Value extends number
    ? number
    : Value extends boolean
      ? boolean
      : Value extends Date
        ? Date
        : Value extends readonly unknown[]
          ? readonly unknown[]
          : unknown;
/** What a GraphQL field may give for a schema key whose input type is Value. */
type FieldValue<Value> = undefined extends Value ? Kind<NonNullable<Value>> | null | undefined : Kind<Value>;

/** One GraphQL field per key of the schema's input. */
type FieldsOf<Schema extends z.ZodType> = { [Key in keyof z.input<Schema>]-?: PothosSchemaTypes.InputFieldRef<Types, FieldValue<z.input<Schema>[Key]>> };

/** The GraphQL fields the schema does not know (zod would drop their values unseen): never, or a type error. */
type Unknown<Schema extends z.ZodType, Fields> = { [Key in Exclude<keyof Fields, keyof z.input<Schema>>]: never };

/** builder.inputType for the input `schema` validates. */
export function inputTypeFor<Schema extends z.ZodType, Fields extends FieldsOf<Schema>>(
  name: string,
  _schema: Schema,
  options: PothosSchemaTypes.InputObjectTypeOptions<Types, Fields & Unknown<Schema, Fields>>,
) {
  return builder.inputType(name, options);
}
