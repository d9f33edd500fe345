import { GraphQLError, Kind } from 'graphql';
import { parseInstant } from '../../kernel/instants.ts';
import { builder } from './builder.ts';

const DATE_TIME_RULE = 'DateTime must be an ISO 8601 date or date-time with a zone (Z or ±hh:mm), in years 1 to 9999';

function parseDateTime(value: unknown): Date {
  const instant = typeof value === 'string' ? parseInstant(value) : null;
  if (instant === null) throw new GraphQLError(DATE_TIME_RULE);
  return instant;
}

/** An instant as an ISO 8601 string in UTC with milliseconds ("2026-11-22T05:00:00.000Z"). */
builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string in UTC.',
  serialize: (value) => value.toISOString(),
  parseValue: parseDateTime,
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

/** Any JSON value (metadata); validated by the service that receives it. */
builder.scalarType('JSON', {
  description: 'A JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast) => {
    const toValue = (node: typeof ast): unknown => {
      switch (node.kind) {
        case Kind.STRING:
        case Kind.BOOLEAN:
          return node.value;
        case Kind.INT:
        case Kind.FLOAT:
          return Number(node.value);
        case Kind.NULL:
          return null;
        case Kind.LIST:
          return node.values.map(toValue);
        case Kind.OBJECT:
          return Object.fromEntries(node.fields.map((field) => [field.name.value, toValue(field.value)]));
        default:
          throw new GraphQLError('JSON literals cannot contain variables');
      }
    };
    return toValue(ast);
  },
});

function parseSafeInt(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw new GraphQLError('SafeInt must be an integer from -(2^53 - 1) to 2^53 - 1');
}

/** Sums of amounts (balances) outgrow Int's 32 bits; a JSON number stays exact up to 2^53 − 1. */
builder.scalarType('SafeInt', {
  description: 'An integer from -(2^53 - 1) to 2^53 - 1, as a JSON number: sums of amounts in minor units.',
  serialize: (value) => parseSafeInt(typeof value === 'bigint' ? Number(value) : value),
  parseValue: parseSafeInt,
  parseLiteral: (ast) => parseSafeInt(ast.kind === Kind.INT ? Number(ast.value) : undefined),
});

export const ModeEnum = builder.enumType('Mode', {
  description: 'Test or live. The mode of a key is the mode of everything created with it.',
  values: ['TEST', 'LIVE'] as const,
});
