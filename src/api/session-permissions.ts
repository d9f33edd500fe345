// What a dashboard user may call, and the audit log of what they did (docs/dashboard.md), in one place for HTTP, SSE and
// graphql-ws alike: before an operation of a session runs, each of its root fields is checked against the role's
// permissions (src/modules/team/roles.ts), and the whole operation is refused with FORBIDDEN before any work when one
// is not allowed; after a mutation of a session, each root field is written to the audit log with the id it was about
// and how it ended. API keys pass untouched: their scope is the fields' own (t.withAuth).
import {
  getArgumentValues,
  getOperationAST,
  Kind,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type GraphQLError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { AppError } from '../kernel/errors.ts';
import { sessionOf, type SessionPrincipal } from '../kernel/principal.ts';
import { refusalOf, ROOT_FIELD_PERMISSIONS } from '../modules/team/index.ts';
import type { GraphQLContext } from '../platform/graphql/context.ts';
import { appErrorToGraphQL } from '../platform/graphql/errors.ts';
import { codeOf } from './operation-metrics.ts';

/** The input keys an audit row takes its subject from, first found first: ids only, never another input value. */
const SUBJECT_KEYS = [
  'paymentId',
  'refundId',
  'disputeId',
  'payoutId',
  'mandateId',
  'subscriptionId',
  'paymentLinkId',
  'eventId',
  'keyId',
  'userId',
  'profileId',
  'merchantId',
  'id',
];

/** An id of ours (src/kernel/ids.ts): what may be written to the audit log as a subject. */
const ID_SHAPE = /^[a-z]+_[0-9A-Za-z]{24}$/;

/** The root fields an operation selects, through its fragments (`__typename` and introspection need no permission). */
function rootFields(document: DocumentNode, selectionSet: SelectionSetNode, seen = new Set<string>()): FieldNode[] {
  return selectionSet.selections.flatMap((selection): FieldNode[] => {
    if (selection.kind === Kind.FIELD) return selection.name.value.startsWith('__') ? [] : [selection];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFields(document, selection.selectionSet, seen);
    const name = selection.name.value;
    if (seen.has(name)) return [];
    seen.add(name);
    const fragment = document.definitions.find((definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === name);
    return fragment?.kind === Kind.FRAGMENT_DEFINITION ? rootFields(document, fragment.selectionSet, seen) : [];
  });
}

/** The id a mutation's root field was about, from its arguments or its `input`: null when it names none. */
function subjectOf(schema: GraphQLSchema, field: FieldNode, variables: Record<string, unknown> | undefined): string | null {
  const definition = schema.getMutationType()?.getFields()[field.name.value];
  if (definition === undefined) return null;
  let args: Record<string, unknown>;
  try {
    args = getArgumentValues(definition, field, variables ?? {});
  } catch {
    return null; // arguments GraphQL refuses: the refusal is the outcome, there is no subject
  }
  const input = typeof args['input'] === 'object' && args['input'] !== null ? (args['input'] as Record<string, unknown>) : {};
  for (const key of SUBJECT_KEYS) {
    const value = args[key] ?? input[key];
    if (typeof value === 'string' && ID_SHAPE.test(value)) return value;
  }
  return null;
}

/** How a root field ended: ok, or the code of the error at its path. */
function outcomeOf(responseKey: string, errors: readonly GraphQLError[] | undefined): string {
  // An error without a path refused the whole operation (a refusal before execution, a bad variable): every field's.
  const error = errors?.find((candidate) => candidate.path === undefined || candidate.path[0] === responseKey);
  if (error === undefined) return 'ok';
  // Errors are read before masking gives them their code (yoga.ts): a resolver's is its AppError's.
  for (let cause: unknown = error; cause instanceof Error; cause = (cause as GraphQLError).originalError) {
    if (cause instanceof AppError) return cause.code;
  }
  return codeOf(error);
}

interface Operation {
  session: SessionPrincipal;
  operation: OperationDefinitionNode;
  fields: FieldNode[];
}

function operationOf(context: GraphQLContext, document: DocumentNode, operationName: string | null | undefined): Operation | null {
  const session = sessionOf(context.principal);
  const operation = session && getOperationAST(document, operationName);
  if (!session || !operation) return null;
  return { session, operation, fields: rootFields(document, operation.selectionSet) };
}

/** The first of the operation's root fields the session's role may not call, as the refusal. */
function refusal({ session, fields }: Operation): GraphQLError | null {
  for (const field of fields) {
    const reason = refusalOf(session.user.role, field.name.value);
    if (reason !== null) {
      const permission = ROOT_FIELD_PERMISSIONS[field.name.value] ?? null;
      return appErrorToGraphQL(new AppError('FORBIDDEN', reason, { role: session.user.role, permission }));
    }
  }
  return null;
}

async function audit(
  context: GraphQLContext,
  schema: GraphQLSchema,
  found: Operation,
  variables: Record<string, unknown> | undefined,
  result: ExecutionResult,
) {
  if (found.operation.operation !== 'mutation') return;
  const { session } = found;
  for (const field of found.fields) {
    const responseKey = field.alias?.value ?? field.name.value;
    await context.services.team
      .record({
        merchantId: session.merchantId,
        userId: session.user.id,
        userEmail: session.user.email,
        action: field.name.value,
        subjectId: subjectOf(schema, field, variables),
        outcome: outcomeOf(responseKey, result.errors),
        requestId: context.requestId,
      })
      .catch((error: unknown) => context.logger.error({ err: error, action: field.name.value }, 'writing an audit log row failed'));
  }
}

export function useSessionPermissions(): Plugin<GraphQLContext> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue;
      const found = operationOf(context, args.document, args.operationName);
      if (found === null) return;
      const refused = refusal(found);
      if (refused !== null) {
        const result = { errors: [refused] };
        setResultAndStopExecution(result);
        // A refused mutation is an action the user tried: recorded with its refusal.
        return audit(context, args.schema, found, args.variableValues ?? undefined, result);
      }
      if (found.operation.operation !== 'mutation') return;
      return {
        onExecuteDone: async ({ result }) => {
          if (!isAsyncIterable(result)) await audit(context, args.schema, found, args.variableValues ?? undefined, result);
        },
      };
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const found = operationOf(args.contextValue, args.document, args.operationName);
      const refused = found && refusal(found);
      if (refused) setResultAndStopExecution({ errors: [refused] });
    },
  };
}
