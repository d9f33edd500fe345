// GraphQL over WebSocket (graphql-ws) on the API's own port and path: the key comes in `connectionParams`
// ({"api-key": "<key>"}), is checked when each subscription starts, and every operation runs through
// Yoga's envelop, so depth, cost, token and alias limits, masked errors and scope-auth are the HTTP ones.
// Bounded: subscriptions per key and per process; a consumer too slow to read is disconnected.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { ExecutionArgs } from 'graphql';
import { GraphQLError } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import type { GraphQLContext } from '../graphql/context.ts';
import { appErrorToGraphQL } from '../graphql/errors.ts';
import type { ServerContext } from '../graphql/yoga.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services/create-services.ts';
import type { Principal } from '../services/principal.ts';

/** What a socket may have queued unsent before its reader counts as too slow (1 MB). */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** graphql-ws's close code for "try again later", which clients treat as retryable. */
const CLOSE_TOO_SLOW = 4500;
/** graphql-ws's close code for Forbidden: the key was revoked while its subscriptions ran. */
const CLOSE_FORBIDDEN = 4403;

interface Counts {
  process: number;
  byKey: Map<string, number>;
}

const keyOf = (principal: Principal) => ('keyId' in principal ? principal.keyId : principal.kind);

function presentedKeyOf(connectionParams: Readonly<Record<string, unknown>> | undefined): string | null {
  const apiKey = connectionParams?.['api-key'] ?? connectionParams?.apiKey;
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return apiKey.trim();
  const authorization = connectionParams?.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return bearer?.[1] ?? null;
}

export function attachGraphQLWebSocket(deps: {
  server: Server;
  yoga: YogaServerInstance<ServerContext, GraphQLContext>;
  services: Services;
  config: Config;
  logger: Logger;
}): { close: () => Promise<void> } {
  const { server, yoga, services, config, logger } = deps;
  const counts: Counts = { process: 0, byKey: new Map() };
  // Each socket's running subscriptions (operation id → key), to release their counts once they complete.
  const runningBySocket = new WeakMap<object, Map<string, string>>();
  // The key each socket's subscriptions run under: checked again on an interval, so a revoked key's end.
  const keyBySocket = new Map<import('ws').WebSocket, string | null>();
  const webSocketServer = new WebSocketServer({ server, path: yoga.graphqlEndpoint, maxPayload: config.MAX_BODY_BYTES });
  const refuse = (code: string, message: string) => [new GraphQLError(message, { extensions: { code } })];

  useServer<Record<string, unknown>, { socket: import('ws').WebSocket }>(
    {
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
      onSubscribe: async (context, id, payload) => {
        let principal: Principal;
        const presented = presentedKeyOf(context.connectionParams);
        try {
          principal = await services.apiKeys.authenticate(presented);
        } catch (error) {
          if (error instanceof AppError) return [appErrorToGraphQL(error)];
          throw error;
        }
        const key = keyOf(principal);
        if (counts.process >= config.SUBSCRIPTIONS_PER_PROCESS) return refuse('RATE_LIMITED', 'This server has as many subscriptions as it takes; connect again later.');
        if ((counts.byKey.get(key) ?? 0) >= config.SUBSCRIPTIONS_PER_KEY) return refuse('RATE_LIMITED', `At most ${config.SUBSCRIPTIONS_PER_KEY} subscriptions per API key.`);
        const enveloped = yoga.getEnveloped({ requestId: randomUUID(), principal, params: payload, request: undefined } as never);
        let document: ExecutionArgs['document'];
        try {
          document = enveloped.parse(payload.query);
        } catch (error) {
          // A syntax error or a parse-time limit (tokens): an error for this operation, not the socket's end.
          if (error instanceof Error && error.name === 'GraphQLError') return [error as GraphQLError];
          throw error;
        }
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
        const errors = enveloped.validate(args.schema, args.document);
        if (errors.length > 0) return errors;
        counts.process += 1;
        counts.byKey.set(key, (counts.byKey.get(key) ?? 0) + 1);
        keyBySocket.set(context.extra.socket, presented);
        context.extra.socket.once('close', () => keyBySocket.delete(context.extra.socket));
        const running = runningBySocket.get(context.extra.socket) ?? new Map<string, string>();
        running.set(id, key);
        runningBySocket.set(context.extra.socket, running);
        return args;
      },
      onNext: (context) => {
        // A reader that cannot keep up is dropped instead of buffering without bound; it reconnects and catches up.
        if (context.extra.socket.bufferedAmount > MAX_BUFFERED_BYTES) context.extra.socket.close(CLOSE_TOO_SLOW, 'too slow to read its subscriptions');
      },
      onComplete: (context, id) => {
        const running = runningBySocket.get(context.extra.socket);
        const key = running?.get(id);
        if (key === undefined) return;
        running!.delete(id);
        counts.process -= 1;
        const left = (counts.byKey.get(key) ?? 1) - 1;
        if (left > 0) counts.byKey.set(key, left);
        else counts.byKey.delete(key);
      },
    },
    webSocketServer,
  );
  webSocketServer.on('error', (error) => logger.warn({ err: error }, 'websocket server error'));

  /** Each distinct key once: a revoked (or otherwise refused) one ends every socket that uses it. */
  const recheckKeys = async () => {
    const verdicts = new Map<string | null, Promise<boolean>>();
    for (const [socket, presented] of keyBySocket) {
      if (presented === null) continue;
      let valid = verdicts.get(presented);
      if (valid === undefined) {
        valid = services.apiKeys.authenticate(presented).then(
          () => true,
          (error: unknown) => !(error instanceof AppError && error.code === 'UNAUTHENTICATED'),
        );
        verdicts.set(presented, valid);
      }
      if (!(await valid)) socket.close(CLOSE_FORBIDDEN, 'Forbidden: the API key was revoked');
    }
  };
  let rechecking: Promise<void> | null = null;
  const timer = setInterval(() => {
    rechecking ??= recheckKeys()
      .catch((error: unknown) => logger.warn({ err: error }, 'subscription key check failed; it runs again next interval'))
      .finally(() => {
        rechecking = null;
      });
  }, config.SUBSCRIPTION_KEY_RECHECK_MS);
  timer.unref();

  return {
    close: () =>
      new Promise((resolve) => {
        clearInterval(timer);
        for (const client of webSocketServer.clients) client.close(1001, 'server shutting down');
        webSocketServer.close(() => resolve());
      }),
  };
}
