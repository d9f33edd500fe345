// Real subscription clients: graphql-ws over a WebSocket, and Server-Sent Events over HTTP, each
// collecting what arrives so a test can wait for it.
import { createClient, type Client } from 'graphql-ws';
import { Redis } from 'ioredis';
import { expect, vi } from 'vitest';
import WebSocket from 'ws';
import { LIVE_TOPICS } from '../../src/api/live-feed.ts';
import type { ApiApp } from '../../src/main/api-app.ts';
import { loadConfig } from '../../src/platform/config.ts';
import type { TypedDocumentString } from '../gql/graphql.ts';
import { testEnv } from './api.ts';
import type { GraphQLErrorShape } from './graphql-client.ts';

/** The live feed's Redis channels (src/api/live-feed.ts, LIVE_TOPICS), as globs under a stack's prefix. */
export const liveChannel = {
  payment: (paymentId: string) => `${LIVE_TOPICS.payment}:${paymentId}`,
  profilePayments: (profileId: string) => `${LIVE_TOPICS.profilePayments}:${profileId}:*`,
  events: (merchantId: string) => `${LIVE_TOPICS.events}:${merchantId}:*`,
};

/**
 * Waits until Redis has a subscriber on the live feed's `channel` for the stack of `env`: a change committed from
 * then on reaches the subscription that started it. Nothing else says so: a subscription starts across a socket,
 * the server and Redis, and graphql-ws acknowledges none of it. It tells of a channel's first subscriber in a
 * process only (later ones share its Redis subscription), so each test watches channels of its own.
 */
export async function untilLive(env: Record<string, string>, channel: string): Promise<void> {
  const config = loadConfig(testEnv(env));
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  const pattern = `${config.REDIS_PREFIX}:${channel}`;
  try {
    await vi.waitFor(async () => expect(await redis.pubsub('CHANNELS', pattern), `a subscriber on ${pattern}`).not.toEqual([]), {
      timeout: 10_000,
      interval: 10,
    });
  } finally {
    redis.disconnect();
  }
}

/** How many subscription streams `api` holds open, as its graphql_subscriptions_open gauge reads (both transports). */
export async function openSubscriptions(api: Pick<ApiApp, 'context'>): Promise<number> {
  const gauge = api.context.metrics.registry.getSingleMetric('graphql_subscriptions_open')!;
  return (await gauge.get()).values[0]?.value ?? 0;
}

export interface Collected<Data> {
  results: Data[];
  errors: GraphQLErrorShape[];
  completed: boolean;
  /** Waits until `count` results have arrived, and returns them. */
  waitFor: (count: number, timeout?: number) => Promise<Data[]>;
  /** Waits until the subscription ended with an error, and returns it. */
  waitForError: (timeout?: number) => Promise<GraphQLErrorShape[]>;
  close: () => void;
}

function collector<Data>(close: () => void): Collected<Data> {
  const collected: Collected<Data> = {
    results: [],
    errors: [],
    completed: false,
    waitFor: (count, timeout = 10_000) =>
      vi.waitFor(
        () => {
          expect(collected.errors, JSON.stringify(collected.errors)).toEqual([]);
          expect(collected.results.length).toBeGreaterThanOrEqual(count);
          return collected.results;
        },
        { timeout, interval: 20 },
      ),
    waitForError: (timeout = 10_000) =>
      vi.waitFor(
        () => {
          expect(collected.errors.length).toBeGreaterThan(0);
          return collected.errors;
        },
        { timeout, interval: 20 },
      ),
    close,
  };
  return collected;
}

/** The WebSocket class with `options` (connections from `localAddress`, a loopback address: a client of its own; headers). */
const webSocketWith = (options: WebSocket.ClientOptions) =>
  class extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, options);
    }
  };

/**
 * A graphql-ws client of the API at `apiUrl`, authenticated by `key` in connectionParams (from `localAddress` if
 * given), with `moreParams` beside it (a platform's `x-connected-merchant-id`, a dashboard session's `csrfToken`), and
 * `headers` sent with its upgrade (a dashboard session's cookie).
 */
export function wsClient(
  apiUrl: string,
  key?: string,
  localAddress?: string,
  moreParams: Record<string, unknown> = {},
  headers?: Record<string, string>,
): Client {
  return createClient({
    url: `${apiUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: localAddress || headers ? webSocketWith({ localAddress, headers }) : WebSocket,
    connectionParams: { ...(key ? { 'api-key': key } : {}), ...moreParams },
    retryAttempts: 0,
    lazy: true,
  });
}

/** Subscribes through graphql-ws; results (the data of each) and errors are collected. */
export function subscribeWs<Data, Variables>(client: Client, document: TypedDocumentString<Data, Variables>, variables: Variables): Collected<Data> {
  let dispose = () => undefined as void;
  const collected = collector<Data>(() => dispose());
  dispose = client.subscribe<Data>(
    { query: document.toString(), variables: variables as Record<string, unknown> },
    {
      next: (result) => {
        if (result.errors) collected.errors.push(...(result.errors as GraphQLErrorShape[]));
        else collected.results.push(result.data as Data);
      },
      error: (error) => {
        if (Array.isArray(error)) collected.errors.push(...error);
        else if (error && typeof error === 'object' && 'code' in error && 'reason' in error) {
          // The socket closed: graphql-ws gives the close event (a revoked key is 4403).
          const closed = error as { code: number; reason: string };
          collected.errors.push({ message: `socket closed ${closed.code}: ${closed.reason}`, extensions: { code: `CLOSE_${closed.code}` } });
        } else collected.errors.push({ message: String((error as Error).message ?? error) });
      },
      complete: () => {
        collected.completed = true;
      },
    },
  );
  return collected;
}

/** Subscribes through Server-Sent Events (Yoga's default transport) with `key` in the api-key header. */
export function subscribeSse<Data, Variables>(
  apiUrl: string,
  key: string,
  document: TypedDocumentString<Data, Variables>,
  variables: Variables,
): Collected<Data> {
  const abort = new AbortController();
  const collected = collector<Data>(() => abort.abort());
  void (async () => {
    const response = await fetch(`${apiUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'api-key': key },
      body: JSON.stringify({ query: document.toString(), variables }),
      signal: abort.signal,
    });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = message
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (!data) continue;
        const result = JSON.parse(data) as { data?: Data; errors?: GraphQLErrorShape[] };
        if (result.errors) collected.errors.push(...result.errors);
        else if (result.data) collected.results.push(result.data);
      }
    }
    collected.completed = true;
  })().catch((error: unknown) => {
    if (!abort.signal.aborted) collected.errors.push({ message: String(error) });
  });
  return collected;
}
