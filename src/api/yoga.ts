// graphql-yoga with the hardening every request gets: depth, cost, token and alias limits, masked errors
// with catalog codes, and the principal resolved from the request's key before execution.
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type DocumentNode } from 'graphql';
import { createLRUCache, createYoga, isAsyncIterable, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/client.ts';
import { databaseUnavailable, isDatabaseUnavailable } from '../platform/db/unavailable.ts';
import { AppError, ERROR_CODES } from '../kernel/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { LiveFeed } from './live-feed.ts';
import type { SubscriptionGate } from './subscription-gate.ts';
import { useSharedSubscriptionExecution } from './shared-execution.ts';
import type { Services } from '../modules/services.ts';
import { CONNECTED_MERCHANT_HEADER } from '../modules/merchants/index.ts';
import type { Principal } from '../kernel/principal.ts';
import { authenticateRequest, CSRF_HEADER, sessionTokenOf, type PresentedCredentials } from './authenticate.ts';
import { type RateLimits } from '../platform/rate-limits.ts';
import type { GraphQLContext } from '../platform/graphql/context.ts';
import type { IdempotencyClaim } from '../platform/http/idempotency.ts';
import { appErrorToGraphQL, TOO_DEEP_TO_PARSE, withErrorCode } from '../platform/graphql/errors.ts';
import { renderGraphiQLPage, type GraphiQLPage } from './graphiql.ts';
import { useErrorReferences, useOperationMetrics } from './operation-metrics.ts';
import type { Metrics } from '../platform/http/metrics.ts';
import { currentScope, errorReferences } from '../platform/request-scope.ts';
import { schema } from './schema.ts';
import { useOperationSpans } from './operation-spans.ts';
import { useSessionPermissions } from './session-permissions.ts';
import { tracingEnabled } from '../platform/tracing.ts';

export interface ServerContext {
  requestId: string;
  /** Who the caller counts as for rate limits (rate-limits.ts, clientKeyOf). */
  clientIp: string;
  /** Set when the HTTP layer already authenticated the request (to scope an Idempotency-Key). */
  principal?: Principal;
  /** A keyed request's claim on its key, for a mutation that takes it with its first write (CLAIM_ON_FIRST_WRITE). */
  idempotencyClaim?: IdempotencyClaim;
}

/**
 * What a request presents to authenticate: its key and the connected merchant it acts for (docs/platforms.md), or the
 * dashboard's session cookie and CSRF header (docs/dashboard.md).
 */
export function presentedCredentials(headers: Headers): PresentedCredentials {
  return {
    key: presentedKey(headers),
    // A header sent empty is still sent: refused (ApiKeyService.actingFor), never read as absent, which would act as the platform.
    connectedMerchantId: headers.get(CONNECTED_MERCHANT_HEADER)?.trim() ?? null,
    sessionToken: sessionTokenOf(headers.get('cookie')),
    csrfToken: headers.get(CSRF_HEADER),
  };
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

/** Whether a publishable key came with a wrong client secret (UNAUTHENTICATED from a resolver). */
function wrongClientSecret(context: GraphQLContext, errors: readonly GraphQLError[] | undefined): boolean {
  return context.principal.kind === 'publishableKey' && errors?.some((error) => findAppError(error)?.code === 'UNAUTHENTICATED') === true;
}

/**
 * A wrong client secret with a publishable key is a failed authentication: counted against the caller's IP
 * like a wrong key, so client secrets cannot be guessed at speed. Its answer stays UNAUTHENTICATED; the
 * caller's next request meets the limit (authenticateWithinLimits).
 */
function useClientSecretFailuresCounted(): Plugin<GraphQLContext> {
  return {
    onExecute: () => ({
      onExecuteDone: async ({ args: { contextValue: context }, result }) => {
        if (!isAsyncIterable(result) && wrongClientSecret(context, result.errors)) await context.limits.count('failedAuthentications', context.clientIp);
      },
    }),
    // A subscription's refusal is not held back for the count.
    onSubscribe: () => ({
      onSubscribeResult: ({ args: { contextValue: context }, result }) => {
        if (isAsyncIterable(result) || !wrongClientSecret(context, result.errors)) return;
        context.limits
          .count('failedAuthentications', context.clientIp)
          .catch((error: unknown) => context.logger.warn({ err: error }, 'counting a failed authentication failed'));
      },
    }),
  };
}

/** A NUL in the query text: raw, or escaped in a string literal (`\u0000`, `\u{0}`). */
// eslint-disable-next-line no-control-regex -- the NUL is what this looks for
const NUL_IN_QUERY = /\u0000|\\u(?:0000|\{0+\})/i;

/**
 * What makes a string unstorable: a NUL character, or a UTF-16 surrogate without its pair (not Unicode text:
 * PostgreSQL's JSON refuses it); null when it is fine.
 */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (!text.isWellFormed()) return 'must be well-formed Unicode (no lone surrogate U+D800 to U+DFFF)';
  return null;
}

/**
 * The dotted path of the first string (or object key) in `value` that cannot be stored, and why; null when
 * all can. Iterative, so variables nested however deep cannot overflow the stack.
 */
function firstUnstorable(value: unknown): { path: string[]; problem: string } | null {
  // Each entry knows its parent, so a path is built only for the string found (nesting costs no copies).
  interface Node {
    value: unknown;
    key: string | null;
    parent: Node | null;
  }
  const pathOf = (node: Node | null): string[] => {
    const path: string[] = [];
    for (let current = node; current !== null && current.key !== null; current = current.parent) path.push(current.key);
    return path.reverse();
  };
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.value === 'string') {
      const problem = unstorable(node.value);
      if (problem) return { path: pathOf(node), problem };
      continue;
    }
    if (node.value === null || typeof node.value !== 'object') continue;
    const entries = Object.entries(node.value);
    for (const [key] of entries) {
      const problem = unstorable(key);
      if (problem) return { path: pathOf(node), problem };
    }
    // Pushed in reverse so the first entry is looked at first, as a recursive walk would.
    for (let index = entries.length - 1; index >= 0; index -= 1) stack.push({ value: entries[index]![1], key: entries[index]![0], parent: node });
  }
  return null;
}

/**
 * PostgreSQL cannot store a NUL character in text or JSON, nor a lone surrogate in JSON (and text would
 * silently turn it into U+FFFD), so no input may contain either: refused once, here, with the field
 * named, instead of failing deep in a query as an internal error or being stored altered.
 */
function useNoNulCharacters(): Plugin {
  return {
    onParams({ params, setResult }) {
      const inQuery = params.query !== undefined && NUL_IN_QUERY.test(params.query) ? { path: [], problem: 'must not contain NUL characters' } : null;
      const found = inQuery ?? firstUnstorable(params.variables ?? {});
      if (found === null) return;
      const { path, problem } = found;
      // Variables are named like inputs ("input.description"): the field is the path below the variable.
      const field = path.length > 1 ? path.slice(1).join('.') : (path[0] ?? 'query');
      setResult({
        errors: [
          new GraphQLError(`${field}: ${problem}`, {
            extensions: { code: 'INVALID_INPUT', field, http: { status: ERROR_CODES.INVALID_INPUT.httpStatus } },
          }),
        ],
      });
    },
  };
}

/**
 * A query nested too deep for the parser's stack (a RangeError) is too complex, not an internal error: a
 * parse error, coded like the other limits (withErrorCode).
 */
function useTooDeepToParse(): Plugin {
  return {
    // Wraps the parser the plugins before it chose (the token-limited one), for HTTP and WebSocket alike.
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options) => {
        try {
          return parseFn(source, options);
        } catch (error) {
          if (error instanceof RangeError) throw new GraphQLError(TOO_DEEP_TO_PARSE);
          throw error;
        }
      });
    },
  };
}

/** Refuses `__schema` and `__type` (not `__typename`) when introspection is off. */
function useNoIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

/** The GraphiQL page (the only HTML Yoga answers) gets its Content-Security-Policy. */
function useGraphiQLPolicy(page: () => Promise<GraphiQLPage>): Plugin {
  return {
    async onResponse({ response }) {
      if (!response.headers.get('content-type')?.startsWith('text/html')) return;
      response.headers.set('content-security-policy', (await page()).policy);
      response.headers.set('referrer-policy', 'no-referrer');
    },
  };
}

/**
 * Yoga refuses a body it has no parser for (415) without a body at all: every refusal carries a catalog
 * code, so such an answer gets one (the status is kept).
 */
function useCodedBareRefusals(): Plugin {
  return {
    onResponse({ response, setResponse, fetchAPI }) {
      if (response.status < 400 || response.body !== null) return;
      const message =
        response.status === 415
          ? 'Content-Type: send application/json (or application/graphql-response+json) with a JSON GraphQL request.'
          : `The request was refused (${response.status} ${response.statusText}).`;
      const headers = new fetchAPI.Headers(response.headers);
      headers.set('content-type', 'application/json; charset=utf-8');
      const field = response.status === 415 ? { field: 'Content-Type' } : {};
      setResponse(
        new fetchAPI.Response(
          JSON.stringify({ errors: [{ message, extensions: { code: 'INVALID_INPUT', ...field, ...errorReferences('INVALID_INPUT', currentScope()) } }] }),
          { status: response.status, headers },
        ),
      );
    },
  };
}

/**
 * Parsed documents by query text, shared by Yoga and the Idempotency-Key check (idempotent-graphql.ts), so a
 * keyed request is parsed once. Only a document that parsed within the token limit is ever kept (both parse
 * with it); depth, alias and cost limits are validation rules, which run on a cached document too.
 */
export interface DocumentCache {
  get(query: string): DocumentNode | undefined;
  set(query: string, document: DocumentNode): unknown;
}

/** Yoga's own LRU (its default size and lifetime), made here so it can be shared. */
export const createDocumentCache = (): DocumentCache => createLRUCache<DocumentNode>();

export function createGraphQLServer(deps: {
  config: Config;
  services: Services;
  logger: Logger;
  db: Database;
  live: LiveFeed;
  gate: SubscriptionGate;
  limits: RateLimits;
  metrics: Metrics;
  documents: DocumentCache;
}): YogaServerInstance<ServerContext, GraphQLContext> {
  const { config, services, logger, db, live, gate, limits, metrics, documents } = deps;
  const graphiql = { title: 'Payments API', subscriptionsProtocol: 'WS' } as const;
  let graphiqlPage: Promise<GraphiQLPage> | undefined;
  const page = () => (graphiqlPage ??= renderGraphiQLPage(graphiql));
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    graphiql: config.graphiql ? graphiql : false,
    renderGraphiQL: async () => (await page()).html,
    logging: false,
    parserAndValidationCache: { documentCache: documents },
    // The HTTP server reads and bounds every body (MAX_BODY_BYTES, 413) before Yoga sees it (src/api/http-server.ts);
    // Yoga's own bound would pipe each request's body through a stream again, and end it with an AbortError.
    maxRequestBodySize: false,
    // Keys travel in headers: any origin may call, and no browser credentials are sent. The dashboard's cookie is
    // SameSite=Strict and same-origin, so it needs no CORS (docs/dashboard.md).
    cors: { credentials: false },
    context: async ({ request, requestId, clientIp, principal: authenticated, idempotencyClaim }) => {
      try {
        const principal = authenticated ?? (await authenticateRequest(services, limits, presentedCredentials(request.headers), clientIp));
        // Over HTTP the request's scope already puts its id on every line (request-scope.ts); a WebSocket operation has none.
        const requestLogger = currentScope() ? logger : logger.child({ requestId });
        return { principal, services, logger: requestLogger, requestId, db, live, gate, clientIp, limits, idempotencyClaim };
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
        // PostgreSQL down or restarting: a retryable 503 that says so, not an internal error.
        if (isDatabaseUnavailable(error)) {
          logger.warn({ err: error }, 'database unavailable');
          return appErrorToGraphQL(databaseUnavailable(), error as GraphQLError);
        }
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
      useTooDeepToParse(),
      maxAliasesPlugin({ n: config.GRAPHQL_MAX_ALIASES }),
      ...(config.introspection ? [] : [useNoIntrospection()]),
      useNoNulCharacters(),
      useClientSecretFailuresCounted(),
      useSessionPermissions(),
      useErrorCodes(),
      useOperationMetrics(metrics),
      useErrorReferences(),
      useCodedBareRefusals(),
      useSharedSubscriptionExecution(metrics),
      useGraphiQLPolicy(page),
      ...(tracingEnabled() ? [useOperationSpans()] : []),
    ],
  });
}
