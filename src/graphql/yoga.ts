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
import { AppError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services/create-services.ts';
import type { GraphQLContext } from './context.ts';
import { appErrorToGraphQL, withErrorCode } from './errors.ts';
import { schema } from './schema/index.ts';

export interface ServerContext {
  requestId: string;
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

export function createGraphQLServer(deps: { config: Config; services: Services; logger: Logger; db: Database }): YogaServerInstance<ServerContext, GraphQLContext> {
  const { config, services, logger, db } = deps;
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: config.graphiql ? { title: 'Payments API', subscriptionsProtocol: 'WS' } : false,
    logging: false,
    context: async ({ request, requestId }) => {
      try {
        const principal = await services.apiKeys.authenticate(presentedKey(request.headers));
        return { principal, services, logger: logger.child({ requestId }), requestId, db };
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
      useErrorCodes(),
    ],
  });
}
