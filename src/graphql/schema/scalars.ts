import { GraphQLError, Kind } from 'graphql';
import { builder } from '../builder.ts';

/** An instant as an ISO 8601 string in UTC with milliseconds ("2026-11-22T05:00:00.000Z"). */
builder.scalarType('DateTime', {
  description: 'An instant, as an ISO 8601 string in UTC.',
  serialize: (value) => value.toISOString(),
  parseValue: (value) => {
    const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
  parseLiteral: (ast) => {
    const date = ast.kind === Kind.STRING ? new Date(ast.value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
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

export const ModeEnum = builder.enumType('Mode', {
  description: 'Test or live. The mode of a key is the mode of everything created with it.',
  values: ['TEST', 'LIVE'] as const,
});
