// GraphQL over WebSocket (graphql-ws) on the API's own port and path: the key comes in `connectionParams`
// ({"api-key": "<key>"}), or the dashboard's session cookie with the upgrade and its CSRF token as `csrfToken`
// (docs/dashboard.md), and is checked when each subscription starts (failed authentications limited per client IP,
// as over HTTP), and every operation runs through
// Yoga's envelop, so depth, cost, token and alias limits, masked errors and scope-auth are the HTTP ones.
// Bounds, backlog and revocation are the subscription gate's (src/api/subscription-gate.ts), shared
// with SSE.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../platform/config.ts';
import { AppError } from '../kernel/errors.ts';
import type { GraphQLContext } from '../platform/graphql/context.ts';
import { appErrorToGraphQL, withErrorCode } from '../platform/graphql/errors.ts';
import type { ServerContext } from './yoga.ts';
import type { Logger } from '../platform/logger.ts';
import type { Services } from '../modules/services.ts';
import { authenticateRequest, sessionTokenOf } from './authenticate.ts';
import { CONNECTED_MERCHANT_HEADER } from '../modules/merchants/index.ts';
import { clientKeyOf, type RateLimits } from '../platform/rate-limits.ts';
import type { Metrics } from '../platform/http/metrics.ts';
import { sharedPayloadJson, type ReadyFrames } from './shared-execution.ts';
import { ANONYMOUS_OPERATION, countErrors, operationLabelOf, withErrorReferences } from './operation-metrics.ts';

/** How long sockets get to close cleanly at shutdown before they are cut. */
const CLOSE_GRACE_MS = 1_000;

function presentedKeyOf(connectionParams: Readonly<Record<string, unknown>> | undefined): string | null {
  const apiKey = connectionParams?.['api-key'] ?? connectionParams?.apiKey;
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.trim();
  const authorization = connectionParams?.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return bearer?.[1] ?? null;
}

/** The connected merchant a platform's key acts for, named like the HTTP header (docs/platforms.md). */
function connectedMerchantOf(connectionParams: Readonly<Record<string, unknown>> | undefined): string | null {
  const names = new Set([CONNECTED_MERCHANT_HEADER.toLowerCase(), 'connectedmerchantid']);
  const named = Object.entries(connectionParams ?? {}).find(([name]) => names.has(name.toLowerCase()));
  if (named === undefined) return null;
  // Sent in any spelling or shape, it is the caller's intent: anything but an id is refused (ApiKeyService.actingFor),
  // never dropped, which would act as the platform itself.
  return typeof named[1] === 'string' ? named[1].trim() : '';
}

/**
 * Bytes a subscriber's socket may hold unsent before its subscription is ended for its backlog: frames written
 * directly (ReadyFrames) wait there, not in a stream, when the client stops reading.
 */
export const MAX_UNSENT_BYTES = 1024 * 1024;

/** Writers of `next` frames of operation `id` with a payload already serialized: the frame graphql-ws would write, built around it. */
function frameWriters(socket: WebSocket, id: string): Pick<Operations, 'sendNext' | 'sendReady'> {
  const head = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
  // As graphql-ws's own sends: a socket already closing takes nothing, and that is no error.
  const open = () => socket.readyState === socket.OPEN;
  return {
    sendNext: (payloadJson) =>
      new Promise((resolve, reject) => {
        if (!open()) return resolve();
        socket.send(`${head}${payloadJson}}`, (error) => (error ? reject(error) : resolve()));
      }),
    sendReady: (payloadJson) => {
      if (!open()) return true;
      socket.send(`${head}${payloadJson}}`);
      return socket.bufferedAmount <= MAX_UNSENT_BYTES;
    },
  };
}

/**
 * What a socket's operations need of its upgrade request, kept on graphql-ws's `extra` when the socket is accepted
 * (onConnect), which then lets the request go: `extra.request` is gone from then on.
 */
type UpgradeFacts = {
  clientIp: string;
  /** The dashboard's session cookie sent with the upgrade. */
  sessionToken: string | null;
};

/** The socket's UpgradeFacts; graphql-ws runs no operation before onConnect has kept them, so their absence is a bug. */
function upgradeFactsOf(extra: Partial<UpgradeFacts>): UpgradeFacts {
  const { clientIp, sessionToken } = extra;
  if (clientIp === undefined || sessionToken === undefined) throw new Error('an operation before the socket was accepted (onConnect)');
  return { clientIp, sessionToken };
}

type Operations = ReadyFrames & {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
  /** Writes a `next` frame of this operation whose payload is already JSON, once the socket has taken it. */
  sendNext: (payloadJson: string) => Promise<void>;
};

/**
 * The operation's results as graphql-ws iterates them, except that a shared result (src/api/shared-execution.ts) is
 * written here as a ready frame, its payload serialized once for all its subscribers; only the others (errors, which
 * carry each subscriber's request id) are left to graphql-ws. Each frame is written before the next result is asked
 * for, as graphql-ws does, so order and the subscription gate's backlog bound hold.
 */
function framed(results: unknown, sendNext: Operations['sendNext']): unknown {
  if (results === null || typeof results !== 'object' || !(Symbol.asyncIterator in results)) return results;
  const source = (results as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    [Symbol.asyncIterator]: () => iterator,
    next: async () => {
      for (;;) {
        const step = await source.next();
        const json = step.done ? null : sharedPayloadJson(step.value);
        if (json === null) return step;
        await sendNext(json);
      }
    },
    return: async (value?: unknown) => (await source.return?.(value)) ?? { done: true, value: undefined },
    throw: async (error?: unknown) => (source.throw ? source.throw(error) : Promise.reject(error as Error)),
  };
  return iterator;
}

export function attachGraphQLWebSocket(deps: {
  server: Server;
  yoga: YogaServerInstance<ServerContext, GraphQLContext>;
  services: Services;
  limits: RateLimits;
  config: Config;
  logger: Logger;
  metrics: Metrics;
}): { close: () => Promise<void> } {
  const { server, yoga, services, limits, config, logger, metrics } = deps;
  /** The request ids of a socket's operations not yet running (graphql-ws's onError is handed the socket's context and the operation's id). */
  const refusedRequestIds = new WeakMap<object, Map<string, string>>();
  const webSocketServer = new WebSocketServer({ server, path: yoga.graphqlEndpoint, maxPayload: config.MAX_BODY_BYTES });

  useServer<Record<string, unknown>, UpgradeFacts>(
    {
      // What onSubscribe needs of the upgrade request is kept, and the request itself let go: its headers and socket
      // wrappers (about 1.3 KB) would otherwise live as long as the socket. graphql-ws refuses operations before this.
      onConnect: (context) => {
        const { extra } = context;
        const { request } = extra;
        // Deleted before the facts are added, so V8 keeps `extra` a small object rather than turning it into a dictionary.
        delete (extra as { request?: IncomingMessage }).request;
        extra.clientIp = clientKeyOf(request.socket.remoteAddress);
        extra.sessionToken = sessionTokenOf(request.headers.cookie);
      },
      execute: (args) => (args.rootValue as Operations).execute(args) as never,
      subscribe: async (args) => {
        const operations = args.rootValue as Operations;
        const results = await operations.subscribe(args);
        // A pushed subscription's stream needs no framing here: one iterator (and its waiting next()) less per subscriber.
        return (operations.writesOwnFrames ? results : framed(results, operations.sendNext)) as never;
      },
      // Every error answer carries the operation's request id (the one its log lines carry) and its docs link, and is
      // counted, as over HTTP (docs/api.md, "Errors"; docs/operations.md, "Metrics").
      onNext: (_context, _id, _payload, args, result) => {
        if (!result.errors) return;
        const scope = { log: { requestId: (args.contextValue as GraphQLContext).requestId }, docsBaseUrl: config.DOCS_BASE_URL };
        countErrors(metrics, operationLabelOf(args.document, args.operationName).operation, result.errors);
        return { ...result, errors: result.errors.map((error) => withErrorReferences(error, scope).toJSON()) };
      },
      // Refused before execution (authentication, parsing, validation): no operation, but the request id onSubscribe gave it.
      onError: (context, id, _payload, errors) => {
        const coded = errors.map((error) => withErrorCode(error));
        countErrors(metrics, ANONYMOUS_OPERATION, coded);
        const requestId = refusedRequestIds.get(context)?.get(id);
        refusedRequestIds.get(context)?.delete(id);
        return coded.map((error) => withErrorReferences(error, { log: { requestId }, docsBaseUrl: config.DOCS_BASE_URL }).toJSON());
      },
      onSubscribe: async (context, id, payload) => {
        // Each operation is a request of its own; its id is kept until it runs, for a refusal before then to carry.
        const requestId = randomUUID();
        const pending = refusedRequestIds.get(context) ?? new Map<string, string>();
        refusedRequestIds.set(context, pending.set(id, requestId));
        const { clientIp, sessionToken } = upgradeFactsOf(context.extra);
        let principal;
        try {
          principal = await authenticateRequest(
            services,
            limits,
            {
              key: presentedKeyOf(context.connectionParams),
              connectedMerchantId: connectedMerchantOf(context.connectionParams),
              // The browser sends the dashboard's cookie with the upgrade; its CSRF token comes in connection_init.
              sessionToken,
              csrfToken: typeof context.connectionParams?.csrfToken === 'string' ? context.connectionParams.csrfToken : null,
            },
            clientIp,
          );
        } catch (error) {
          if (error instanceof AppError) return [appErrorToGraphQL(error)];
          throw error;
        }
        const enveloped = yoga.getEnveloped({ requestId, clientIp, principal, params: payload } as never);
        let document: ExecutionArgs['document'];
        try {
          document = enveloped.parse(payload.query);
        } catch (error) {
          // A syntax error or a parse-time limit (tokens, nesting): an error for this operation, not the socket's end.
          if (error instanceof Error && error.name === 'GraphQLError') return [withErrorCode(error as GraphQLError)];
          throw error;
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length > 0) return errors;
        pending.delete(id);
        return {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe, ...frameWriters(context.extra.socket, id) } satisfies Operations,
        };
      },
    },
    webSocketServer,
  );
  webSocketServer.on('error', (error) => logger.warn({ err: error }, 'websocket server error'));

  return {
    close: () =>
      new Promise((resolve) => {
        for (const client of webSocketServer.clients) client.close(1001, 'server shutting down');
        // A client that does not answer the closing handshake is cut, so shutdown stays bounded.
        const cut = setTimeout(() => {
          for (const client of webSocketServer.clients) client.terminate();
        }, CLOSE_GRACE_MS).unref();
        webSocketServer.close(() => {
          clearTimeout(cut);
          resolve();
        });
      }),
  };
}
