// graphql-yoga with the hardening every request gets: depth, cost, token and alias limits, masked errors
// with catalog codes, and the principal resolved from the request's key before execution.
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../config.ts';
import type { Database } from '../db/client.ts';
import { AppError, ERROR_CODES } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import type { LiveFeed } from '../realtime/live-feed.ts';
import type { SubscriptionGate } from './subscription-gate.ts';
import type { Services } from '../services/create-services.ts';
import type { Principal } from '../services/principal.ts';
import type { GraphQLContext } from './context.ts';
import { appErrorToGraphQL, withErrorCode } from './errors.ts';
import { schema } from './schema/index.ts';

export interface ServerContext {
  requestId: string;
  /** Set when the HTTP layer already authenticated the request (to scope an Idempotency-Key). */
  principal?: Principal;
}

/** The key from `api-key: <key>` or `Authorization: Bearer <key>`; null when neither is sent. */
export function presentedKey(headers: Headers): string | null {
  const apiKey = headers.get('api-key');
  if (apiKey) return apiKey.trim();
  const authorization = headers.get('authorization');
  const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return bearer?.[1] ?? null;
}

// Errors are recognised by name and shape, not `instanceof`: graphql can be loaded twice (ESM and CJS).
function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof Error && error.name === 'GraphQLError';
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current instanceof Error && chain.length < 10; current = (current as GraphQLError).originalError) {
    chain.push(current);
  }
  return chain;
}

function findAppError(error: unknown): AppError | undefined {
  return causes(error).find((cause): cause is AppError => cause instanceof AppError);
}

function hasUnexpectedCause(error: GraphQLError): boolean {
  return causes(error).some((cause) => !isGraphQLError(cause));
}

/** Adds catalog codes to the errors that reach the response without passing through maskError. */
function useErrorCodes(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || !('errors' in result) || !result.errors) return;
      setResult({ ...result, errors: result.errors.map((error) => withErrorCode(error as GraphQLError)) });
    },
  };
}

/** A NUL in the query text: raw, or escaped in a string literal (`\u0000`, `\u{0}`). */
const NUL_IN_QUERY = /\u0000|\\u(?:0000|\{0+\})/i;

/** The dotted path of the first string in `value` that contains a NUL character, or null. */
function pathOfNul(value: unknown, path: string[] = []): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    const found = key.includes('\u0000') ? path : pathOfNul(child, [...path, key]);
    if (found) return found;
  }
  return null;
}

/**
 * PostgreSQL cannot store a NUL character in text or JSON, so no input may contain one: refused once,
 * here, with the field named, instead of failing deep in a query as an internal error.
 */
function useNoNulCharacters(): Plugin {
  return {
    onParams({ params, setResult }) {
      const inQuery = params.query !== undefined && NUL_IN_QUERY.test(params.query) ? [] : null;
      const path = inQuery ?? pathOfNul(params.variables ?? {});
      if (path === null) return;
      // Variables are named like inputs ("input.description"): the field is the path below the variable.
      const field = path.length > 1 ? path.slice(1).join('.') : (path[0] ?? 'query');
      setResult({
        errors: [
          new GraphQLError(`${field}: must not contain NUL characters`, {
            extensions: { code: 'INVALID_INPUT', field, http: { status: ERROR_CODES.INVALID_INPUT.httpStatus } },
          }),
        ],
      });
    },
  };
}

export function createGraphQLServer(deps: {
  config: Config;
  services: Services;
  logger: Logger;
  db: Database;
  live: LiveFeed;
  gate: SubscriptionGate;
}): YogaServerInstance<ServerContext, GraphQLContext> {
  const { config, services, logger, db, live, gate } = deps;
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: config.graphiql ? { title: 'Payments API', subscriptionsProtocol: 'WS' } : false,
    logging: false,
    context: async ({ request, requestId, principal: authenticated }) => {
      try {
        const principal = authenticated ?? (await services.apiKeys.authenticate(presentedKey(request.headers)));
        return { principal, services, logger: logger.child({ requestId }), requestId, db, live, gate };
      } catch (error) {
        if (error instanceof AppError) throw appErrorToGraphQL(error);
        throw error;
      }
    },
    maskedErrors: {
      isDev: false, // never attach original errors or stacks to responses, whatever NODE_ENV says
      maskError(error, message) {
        const appError = findAppError(error);
        if (appError) return appErrorToGraphQL(appError, error as GraphQLError);
        // GraphQL's own errors (validation, coercion, scope-auth) carry no exception of ours: pass them on.
        if (isGraphQLError(error) && !hasUnexpectedCause(error)) return error;
        logger.error({ err: error }, 'unexpected error in GraphQL execution');
        return new GraphQLError(message === 'Unexpected error.' ? 'Internal error; it has been logged.' : message, {
          extensions: { code: 'INTERNAL', http: { status: 500 } },
        });
      },
    },
    plugins: [
      maxDepthPlugin({ n: config.GRAPHQL_MAX_DEPTH, flattenFragments: true }),
      costLimitPlugin({ maxCost: config.GRAPHQL_MAX_COST }),
      maxTokensPlugin({ n: config.GRAPHQL_MAX_TOKENS }),
      maxAliasesPlugin({ n: config.GRAPHQL_MAX_ALIASES }),
      useNoNulCharacters(),
      useErrorCodes(),
    ],
  });
}
