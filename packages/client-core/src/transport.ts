// GraphQL over HTTP (queries and mutations) and over WebSocket with graphql-ws (subscriptions), with one API
// key. Shared by the payments SDK (a publishable key) and the dashboard (a secret key). Runs in browsers and
// in Node (give Node 20 a WebSocket implementation, such as the `ws` package).
import { createClient, type Client } from 'graphql-ws';
import { ApiError, errorOf, type GraphQLErrorShape } from './errors.ts';

/** A typed document as GraphQL Code Generator writes it (documentMode: 'string'). */
export interface Document<Result, Variables> {
  toString(): string;
  __apiType?: (variables: Variables) => Result;
}

export interface TransportOptions {
  /** The API key sent with every request: publishable for the SDK, secret for the dashboard. */
  apiKey: string;
  /** The service's base URL (`https://pay.example.com`); the page's own origin in a browser by default. */
  baseUrl?: string;
  /** A WebSocket class where there is no global one (Node 20: `import WebSocket from 'ws'`). */
  webSocketImpl?: unknown;
}

export interface SubscriptionHandlers<Result> {
  next: (data: Result) => void;
  error?: (error: ApiError) => void;
}

export interface Transport {
  request<Result, Variables>(document: Document<Result, Variables>, variables: Variables): Promise<Result>;
  /** Starts a subscription; returns the function that stops it. */
  subscribe<Result, Variables>(document: Document<Result, Variables>, variables: Variables, handlers: SubscriptionHandlers<Result>): () => void;
  close(): Promise<void>;
}

function defaultBaseUrl(): string {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (!origin) throw new Error('baseUrl is required outside a browser page.');
  return origin;
}

export function createTransport(options: TransportOptions): Transport {
  const baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/$/, '');
  const endpoint = `${baseUrl}/graphql`;
  let socket: Client | null = null;
  const socketClient = () =>
    (socket ??= createClient({
      url: endpoint.replace(/^http/, 'ws'),
      connectionParams: { 'api-key': options.apiKey },
      lazy: true,
      // A dropped socket is reopened (5 tries, graphql-ws's backoff); the caller re-reads what it may have missed.
      retryAttempts: 5,
      ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
    }));

  return {
    async request(document, variables) {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', 'api-key': options.apiKey },
        body: JSON.stringify({ query: document.toString(), variables }),
      });
      let body: { data?: unknown; errors?: GraphQLErrorShape[] };
      try {
        body = (await response.json()) as typeof body;
      } catch {
        throw new ApiError(`The API answered HTTP ${response.status} without a GraphQL body.`, {
          code: response.status >= 500 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL',
        });
      }
      if (body.errors?.length) throw errorOf(body.errors);
      return body.data as never;
    },
    subscribe(document, variables, handlers) {
      return socketClient().subscribe(
        { query: document.toString(), variables: variables as Record<string, unknown> },
        {
          next: (result) => {
            if (result.errors?.length) handlers.error?.(errorOf(result.errors as GraphQLErrorShape[]));
            else if (result.data) handlers.next(result.data as never);
          },
          error: (error) => {
            if (Array.isArray(error)) handlers.error?.(errorOf(error as GraphQLErrorShape[]));
            else handlers.error?.(new ApiError('The live connection closed.', { code: 'SERVICE_UNAVAILABLE' }));
          },
          complete: () => undefined,
        },
      );
    },
    async close() {
      await socket?.dispose();
      socket = null;
    },
  };
}
