// The API's one HTTP server: GraphQL (HTTP and SSE) at /graphql, operational routes, the REST sidecar (the
// redirect return, connector callbacks and their registration, payment links, dashboard sign-in) and the web pages
// (checkout, dashboard, SDK). Every request gets an id, a bounded body, a log line and metrics.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Config } from '../platform/config.ts';
import { AppError, ERROR_CODES, errorBody } from '../kernel/errors.ts';
import type { GraphQLContext } from '../platform/graphql/context.ts';
import { presentedCredentials, type DocumentCache, type ServerContext } from './yoga.ts';
import type { Logger } from '../platform/logger.ts';
import type { Services } from '../modules/services.ts';
import type { Principal } from '../kernel/principal.ts';
import { authenticateRequest } from './authenticate.ts';
import { clientKeyOf, type RateLimits } from '../platform/rate-limits.ts';
import type { Metrics } from '../platform/http/metrics.ts';
import { currentScope, errorReferences, runInScope } from '../platform/request-scope.ts';
import { BodyTooLargeError, ClientClosedError, readBody, sendJson, sendResponse, toFetchHeaders } from '../platform/http/node-bridge.ts';
import {
  appErrorResponse,
  classifyKeyedRequest,
  fieldsClaimingOnFirstWrite,
  keyWithoutApiKey,
  runIdempotently,
  type PlainResponse,
} from './idempotent-graphql.ts';
import { schema } from './schema.ts';
import { databaseUnavailable, isDatabaseUnavailable } from '../platform/db/unavailable.ts';
import { CALLBACK_ROUTE, handleCallback, handleRegistration, REGISTRATION_ROUTE } from './routes/connector-webhooks.ts';
import { handlePaymentLink, PAYMENT_LINK_ROUTE } from './routes/payment-links.ts';
import { handleRedirectResponse, REDIRECT_RESPONSE_ROUTE } from './routes/redirect-response.ts';
import { handleWebRoute, LOGIN_PAGE_ROUTE, WEB_ROUTES } from './web-pages.ts';
import { DASHBOARD_SESSION_ROUTES, handleDashboardSession } from './routes/dashboard-sessions.ts';

export interface HttpServerDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  yoga: YogaServerInstance<ServerContext, GraphQLContext>;
  /** Yoga's parsed documents (yoga.ts), which the Idempotency-Key check reads and fills. */
  documents: DocumentCache;
  services: Services;
  limits: RateLimits;
  /** Resolves when PostgreSQL and Redis answer; rejects with the reason otherwise. */
  readiness: () => Promise<void>;
}

const OPERATIONAL_ROUTES = new Set(['/health', '/ready', '/metrics']);

function routeLabel(pathname: string): string {
  if (pathname === '/graphql' || OPERATIONAL_ROUTES.has(pathname) || WEB_ROUTES.has(pathname) || DASHBOARD_SESSION_ROUTES.has(pathname)) return pathname;
  if (REDIRECT_RESPONSE_ROUTE.test(pathname)) return '/payments/:id/redirect/response/:connector';
  if (CALLBACK_ROUTE.test(pathname)) return '/webhooks/:merchant_id/:merchant_connector_id';
  if (REGISTRATION_ROUTE.test(pathname)) return '/account/:account_id/webhooks/:merchant_connector_id';
  const paymentLink = PAYMENT_LINK_ROUTE.exec(pathname);
  if (paymentLink) return `/payment-links/:id${paymentLink[2] ?? ''}`;
  return 'other';
}

/**
 * Whose idempotency records a request shares: one API key's (the admin key and no key have their own), and a
 * platform's key has one set per connected merchant it acts for, so one key sent for two merchants is two requests.
 */
function scopeOf(principal: Principal): string {
  if (principal.kind === 'secretKey' && principal.platformMerchantId !== undefined) return `${principal.keyId}:${principal.merchantId}`;
  return 'keyId' in principal ? principal.keyId : principal.kind;
}

function sendPlain(reply: ServerResponse, answer: PlainResponse): void {
  reply.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
  reply.end(answer.body);
}

export function createHttpServer(deps: HttpServerDeps): Server {
  const { config, logger, metrics, yoga, documents, readiness, services, limits } = deps;
  const claimingOnFirstWrite = fieldsClaimingOnFirstWrite(schema);

  async function handleGraphQL(request: IncomingMessage, reply: ServerResponse, url: URL, requestId: string, clientIp: string): Promise<void> {
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    let body: Buffer | undefined;
    if (hasBody) {
      try {
        body = await readBody(request, config.MAX_BODY_BYTES);
      } catch (error) {
        if (!(error instanceof BodyTooLargeError)) throw error;
        const message = `The request body is larger than ${config.MAX_BODY_BYTES} bytes.`;
        sendJson(reply, 413, { errors: [{ message, extensions: { code: 'PAYLOAD_TOO_LARGE', ...errorReferences('PAYLOAD_TOO_LARGE', currentScope()) } }] });
        return;
      }
    }
    const headers = toFetchHeaders(request);
    // Only a streaming subscription stops when its client leaves. Anything else runs to the end: a
    // mutation cut off between the processor call and the commit would leave work for sync to repair.
    const streaming = request.method === 'GET' || (headers.get('accept') ?? '').includes('text/event-stream');
    // (No signal at all otherwise: each would cost an AbortController, and the adapter a promise racing it.)
    let signal: AbortSignal | undefined;
    if (streaming) {
      const abort = new AbortController();
      reply.on('close', () => abort.abort());
      signal = abort.signal;
    }
    const execute = (serverContext: ServerContext) =>
      yoga.fetch(url, { method: request.method, headers, body: body?.length ? (body as unknown as BodyInit) : undefined, signal }, serverContext);
    const idempotencyKey = headers.get('idempotency-key');
    if (idempotencyKey === null || !hasBody) return sendResponse(await execute({ requestId, clientIp }), reply);
    // The key is scoped to the authenticated API key, so the caller is authenticated before the body is
    // parsed: a request without a valid API key costs no parse and leaves no idempotency record.
    let principal: Principal;
    try {
      principal = await authenticateRequest(services, limits, presentedCredentials(headers), clientIp);
    } catch (error) {
      if (error instanceof AppError) return sendPlain(reply, appErrorResponse(error));
      throw error;
    }
    if (principal.kind === 'anonymous') return sendPlain(reply, keyWithoutApiKey());
    const keyed = classifyKeyedRequest(body, config.GRAPHQL_MAX_TOKENS, documents, claimingOnFirstWrite);
    if (keyed.kind === 'unkeyed') return sendResponse(await execute({ requestId, clientIp, principal }), reply);
    if (keyed.kind === 'refused') return sendPlain(reply, keyed.response);
    let answer: PlainResponse;
    try {
      answer = await runIdempotently(services.idempotency, scopeOf(principal), idempotencyKey, keyed, async (idempotencyClaim) => {
        const response = await execute({ requestId, clientIp, principal, ...(idempotencyClaim && { idempotencyClaim }) });
        return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
      });
    } catch (error) {
      // The key's own statements (its claim, its answer, a held insert) meet an unreachable database as a mutation's do:
      // a SERVICE_UNAVAILABLE to retry later (the key keeps a retry from acting twice), not an internal error.
      if (!isDatabaseUnavailable(error)) throw error;
      logger.warn({ err: error, requestId }, 'database unavailable');
      answer = appErrorResponse(databaseUnavailable());
    }
    sendPlain(reply, answer);
  }

  async function route(request: IncomingMessage, reply: ServerResponse, url: URL, requestId: string): Promise<void> {
    const clientIp = clientKeyOf(request.socket.remoteAddress);
    switch (url.pathname) {
      case '/graphql':
        return handleGraphQL(request, reply, url, requestId, clientIp);
      case '/health':
        return sendJson(reply, 200, { status: 'ok' });
      case '/ready':
        try {
          await readiness();
          return sendJson(reply, 200, { status: 'ready' });
        } catch (error) {
          return sendJson(reply, 503, { status: 'unavailable', reason: (error as Error).message });
        }
      case '/metrics':
        reply.writeHead(200, { 'content-type': metrics.registry.contentType });
        reply.end(await metrics.registry.metrics());
        return;
      default: {
        const signInPage = url.pathname === LOGIN_PAGE_ROUTE && (request.method === 'GET' || request.method === 'HEAD');
        if (DASHBOARD_SESSION_ROUTES.has(url.pathname) && !signInPage)
          return handleDashboardSession({ config, services, limits, clientIp, requestId }, url.pathname, request, reply);
        if (WEB_ROUTES.has(url.pathname)) return handleWebRoute(url.pathname, request.method ?? '', reply);
        const redirect = request.method === 'GET' || request.method === 'POST' ? REDIRECT_RESPONSE_ROUTE.exec(url.pathname) : null;
        if (redirect) return handleRedirectResponse(services, redirect, request, url.searchParams, reply);
        const callback = request.method === 'POST' ? CALLBACK_ROUTE.exec(url.pathname) : null;
        if (callback) return handleCallback(services, callback, request, reply);
        const registration = request.method === 'POST' ? REGISTRATION_ROUTE.exec(url.pathname) : null;
        if (registration) return handleRegistration({ services, limits, clientIp }, registration, request, reply);
        const paymentLink = PAYMENT_LINK_ROUTE.exec(url.pathname);
        if (paymentLink) return handlePaymentLink({ services, limits, clientIp }, paymentLink, request, reply);
        return sendJson(reply, 404, errorBody('NOT_FOUND', `No route ${request.method} ${url.pathname}.`));
      }
    }
  }

  return createServer((request, reply) => {
    const requestId = (request.headers['x-request-id'] as string | undefined)?.slice(0, 64) || randomUUID();
    // Every log line written for this request, by any service, carries its id (request-scope.ts).
    runInScope({ log: { requestId }, docsBaseUrl: config.DOCS_BASE_URL }, () => serve(request, reply, requestId));
  });

  function serve(request: IncomingMessage, reply: ServerResponse, requestId: string): void {
    const started = process.hrtime.bigint();
    reply.setHeader('x-request-id', requestId);
    // A fixed base: the Host header is the client's to forge (and `Host: [` would make URL throw here).
    const url = URL.parse(request.url ?? '/', 'http://api.invalid');
    if (url === null) {
      sendJson(reply, 400, errorBody('INVALID_INPUT', 'The request target is not a valid URL.'));
      return;
    }
    const label = routeLabel(url.pathname);
    reply.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequests.inc({ route: label, method: request.method ?? '', status: String(reply.statusCode) });
      metrics.httpDuration.observe({ route: label }, seconds);
      if (label !== '/health' && label !== '/metrics') {
        logger.info({ requestId, method: request.method, path: url.pathname, status: reply.statusCode, ms: Math.round(seconds * 1e4) / 10 }, 'request');
      }
    });
    route(request, reply, url, requestId).catch((error: unknown) => {
      // Clients give up mid-upload all the time; there is nobody to answer and no fault of ours to trace.
      if (error instanceof ClientClosedError) return logger.info({ requestId, method: request.method, path: url.pathname }, error.message);
      logger.error({ err: error, requestId }, 'unhandled error in HTTP handler');
      if (!reply.headersSent) sendJson(reply, 500, errorBody('INTERNAL', ERROR_CODES.INTERNAL.description));
      else reply.destroy();
    });
  }
}
