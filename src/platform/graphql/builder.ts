// The Pothos builder: configuration only, no types (they live in one file per domain under ./schema).
import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import SimpleObjectsPlugin from '@pothos/plugin-simple-objects';
import { AppError } from '../../kernel/errors.ts';
import type PrismaTypes from '../../generated/pothos-types.ts';
import { getDatamodel } from '../../generated/pothos-types.ts';
import type { ContextFor, GraphQLContext } from './context.ts';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  PrismaTypes: PrismaTypes;
  AuthScopes: { admin: boolean; secretKey: boolean; publishableKey: boolean };
  // A root field declares its scope once, with t.withAuth(scopes): its resolver then sees the principal that scope admits.
  AuthContexts: { admin: ContextFor<'admin'>; secretKey: ContextFor<'secretKey'>; publishableKey: ContextFor<'publishableKey'> };
  // IDs are our prefixed strings (src/kernel/ids.ts), never numbers, both ways.
  Scalars: {
    ID: { Input: string; Output: string };
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
    SafeInt: { Input: number; Output: number | bigint };
  };
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, SimpleObjectsPlugin, PrismaPlugin],
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: ({ principal }) => ({
      admin: principal.kind === 'admin',
      secretKey: principal.kind === 'secretKey',
      // The SDK's key; each SDK operation also checks the payment's client secret.
      publishableKey: principal.kind === 'publishableKey',
    }),
    unauthorizedError: (_parent, context) =>
      context.principal.kind === 'anonymous'
        ? new AppError('UNAUTHENTICATED', 'An API key is required (header "api-key" or "Authorization: Bearer").')
        : new AppError('FORBIDDEN', 'This key may not perform this operation.'),
  },
  prisma: {
    // The client is only used for relation loading of nested selections; services own every other query.
    client: (context) => context.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
