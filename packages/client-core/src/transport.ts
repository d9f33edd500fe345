// GraphQL over HTTP (queries and mutations) and over WebSocket with graphql-ws (subscriptions), with one API
// key or a dashboard session. Shared by the browser SDK (a publishable key), the server SDK (a secret key) and
// the dashboard (its session's cookie and CSRF token, docs/dashboard.md). Runs in browsers and in Node (give
// Node 20 a WebSocket implementation, such as the `ws` package).
// The server SDK turns on what a backend needs (docs/sdk-node.md): an idempotency key per mutation, retries
// and a timeout; the browser SDK and the dashboard keep one plain try.
import { createClient, type Client } from 'graphql-ws';
import { ApiError, ConnectionError, apiErrorOf, errorOf, type GraphQLErrorShape } from './errors.ts';
import { isTransient, retryAfterSecondsOf, retryDelayMs } from './retries.ts';

/** A typed document as GraphQL Code Generator writes it (documentMode: 'string'). */
export interface Document<Result, Variables> {
  toString(): string;
  __apiType?: (variables: Variables) => Result;
}

/** Who the requests are from: an API key, or a dashboard session (exactly one). */
export type TransportCredentials =
  /** The API key sent with every request: publishable for the SDK, secret for servers. */
  | { apiKey: string; csrfToken?: never }
  /**
   * A dashboard session's CSRF token: the session's HttpOnly cookie goes with same-origin requests (and the
   * WebSocket's handshake), the token in the X-CSRF-Token header and in connection_init's payload.
   */
  | { csrfToken: string; apiKey?: never };

/** Where and how requests go, whoever they are from. */
export interface TransportSettings {
  /** The service's base URL (`https://pay.example.com`); the page's own origin in a browser by default. */
  baseUrl?: string;
  /** A WebSocket class where there is no global one (Node 20: `import WebSocket from 'ws'`). */
  webSocketImpl?: unknown;
  /** How many times a request is tried again after a network error, 503, RATE_LIMITED or CONFLICT; 0 by default. */
  maxRetries?: number;
  /** Each try's limit in ms, after which it counts as a network error (ConnectionError); none by default. */
  timeoutMs?: number;
  /** Send each mutation with an `Idempotency-Key` (a new one per call, kept by its retries); off by default. */
  idempotencyKeys?: boolean;
  /** Waits between tries (setTimeout by default); tests give their own, to see the delays without waiting them. */
  sleep?: (ms: number) => Promise<void>;
  /** The jitter's randomness, in [0, 1) (Math.random by default). */
  random?: () => number;
}

export type TransportOptions = TransportCredentials & TransportSettings;

export interface RequestOptions {
  /** The mutation's Idempotency-Key (docs/api.md, "Keys and headers") instead of a generated one. */
  idempotencyKey?: string;
}

export interface SubscriptionHandlers<Result> {
  next: (data: Result) => void;
  error?: (error: ApiError) => void;
}

export interface Transport {
  request<Result, Variables>(document: Document<Result, Variables>, variables: Variables, options?: RequestOptions): Promise<Result>;
  /** Starts a subscription; returns the function that stops it. */
  subscribe<Result, Variables>(document: Document<Result, Variables>, variables: Variables, handlers: SubscriptionHandlers<Result>): () => void;
  /** A subscription as an async iterator: `for await` it; `break` (or return()) stops it. Errors are thrown as ApiError. */
  iterate<Result, Variables>(document: Document<Result, Variables>, variables: Variables): AsyncIterableIterator<Result>;
  close(): Promise<void>;
}

function defaultBaseUrl(): string {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (!origin) throw new Error('baseUrl is required outside a browser page.');
  return origin;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The operation's kind, from the first definition of the document's text (codegen writes the operation first). */
const isMutation = (query: string) => /^\s*mutation\b/.test(query);

/** The error of an answer without a GraphQL body (a proxy's page, a cut-off body): a 5xx is the service being unavailable. */
function bodilessError(status: number, requestId: string | undefined): ApiError {
  return apiErrorOf(
    `The API answered HTTP ${status} without a GraphQL body.`,
    { code: status >= 500 ? 'SERVICE_UNAVAILABLE' : 'INTERNAL' },
    { httpStatus: status, ...(requestId ? { requestId } : {}) },
  );
}

const socketClosed = () => new ApiError('The live connection closed.', { code: 'SERVICE_UNAVAILABLE' });

/** The headers, fetch options and connection_init payload of the options' credentials. */
function credentialsOf(options: TransportCredentials): { headers: Record<string, string>; fetch: RequestInit; connectionParams: Record<string, string> } {
  if ((options.apiKey === undefined) === (options.csrfToken === undefined)) throw new Error('Give createTransport exactly one of apiKey and csrfToken.');
  if (options.csrfToken !== undefined)
    return { headers: { 'x-csrf-token': options.csrfToken }, fetch: { credentials: 'same-origin' }, connectionParams: { csrfToken: options.csrfToken } };
  return { headers: { 'api-key': options.apiKey! }, fetch: {}, connectionParams: { 'api-key': options.apiKey! } };
}

export function createTransport(options: TransportOptions): Transport {
  const credentials = credentialsOf(options);
  const baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/$/, '');
  const endpoint = `${baseUrl}/graphql`;
  const maxRetries = options.maxRetries ?? 0;
  const sleep = options.sleep ?? sleepFor;
  const random = options.random ?? Math.random;
  let socket: Client | null = null;
  const socketClient = () =>
    (socket ??= createClient({
      url: endpoint.replace(/^http/, 'ws'),
      connectionParams: credentials.connectionParams,
      lazy: true,
      // A dropped socket is reopened (5 tries, graphql-ws's backoff); the caller re-reads what it may have missed.
      retryAttempts: 5,
      ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
    }));

  /** One try: the answer's data, or the error it answered with (ConnectionError when none came). */
  async function send(body: string, idempotencyKey: string | undefined): Promise<unknown> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...credentials.headers,
    };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    let response: Response;
    let text: string;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body,
        ...credentials.fetch,
        // A redirect is answered as it is, never followed: fetch would send the API key on to wherever it points.
        redirect: 'manual',
        ...(options.timeoutMs ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = error instanceof Error && error.name === 'TimeoutError';
      throw new ConnectionError(
        timedOut ? `The API did not answer within ${options.timeoutMs} ms.` : `The API could not be reached (${(error as Error).message}).`,
        error,
      );
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    let answer: { data?: unknown; errors?: GraphQLErrorShape[] };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw bodilessError(response.status, requestId);
    }
    if (!answer.errors?.length) return answer.data;
    const [first] = answer.errors;
    const retryAfterSeconds = retryAfterSecondsOf(response.headers.get('retry-after'));
    // The Retry-After header is the rule (docs/api.md, "Errors"); it joins the extensions so RateLimitError reads one place.
    const extensions = { ...first?.extensions, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) };
    throw errorOf([{ message: first?.message ?? 'The API answered with an error.', extensions }], {
      httpStatus: response.status,
      ...(requestId ? { requestId } : {}),
    });
  }

  return {
    async request(document, variables, requestOptions = {}) {
      const query = document.toString();
      const body = JSON.stringify({ query, variables });
      const mutation = isMutation(query);
      const idempotencyKey = mutation ? (requestOptions.idempotencyKey ?? (options.idempotencyKeys ? globalThis.crypto.randomUUID() : undefined)) : undefined;
      // A mutation is tried again only under an idempotency key: the service then runs it at most once.
      const retries = mutation && idempotencyKey === undefined ? 0 : maxRetries;
      let unanswered = false;
      for (let retryNumber = 1; ; retryNumber++) {
        try {
          return (await send(body, idempotencyKey)) as never;
        } catch (error) {
          unanswered ||= error instanceof ConnectionError;
          const delayMs = retryNumber <= retries && error instanceof ApiError ? retryDelayMs(error, retryNumber, random) : null;
          if (delayMs !== null) {
            await sleep(delayMs);
            continue;
          }
          // A try without an answer may still commit (a later one's CONFLICT is it, still running): only the
          // same key can tell, so the caller must not take this for a refusal and repeat under a new one.
          if (mutation && unanswered && idempotencyKey !== undefined && error instanceof ApiError && isTransient(error)) {
            throw new ConnectionError(
              `A try of this mutation got no answer and no later try settled it (the last: ${error.message}), so its outcome is unknown: ` +
                'repeat it with the same Idempotency-Key (error.idempotencyKey) to get its outcome (if the service says that is unknown, look the object up before using a new key).',
              error,
              idempotencyKey,
            );
          }
          throw error;
        }
      }
    },
    subscribe(document, variables, handlers) {
      return socketClient().subscribe(
        { query: document.toString(), variables: variables as Record<string, unknown> },
        {
          next: (result) => {
            if (result.errors?.length) handlers.error?.(errorOf(result.errors as GraphQLErrorShape[]));
            else if (result.data) handlers.next(result.data as never);
          },
          error: (error) => handlers.error?.(Array.isArray(error) ? errorOf(error as GraphQLErrorShape[]) : socketClosed()),
          complete: () => undefined,
        },
      );
    },
    // Leaving the caller's loop returns this generator, whose for-await returns graphql-ws's iterator: it unsubscribes.
    async *iterate(document, variables) {
      const results = socketClient().iterate({ query: document.toString(), variables: variables as Record<string, unknown> });
      try {
        for await (const result of results) {
          if (result.errors?.length) throw errorOf(result.errors as GraphQLErrorShape[]);
          if (result.data) yield result.data as never;
        }
      } catch (error) {
        if (error instanceof ApiError) throw error;
        throw Array.isArray(error) ? errorOf(error as GraphQLErrorShape[]) : socketClosed();
      }
    },
    async close() {
      await socket?.dispose();
      socket = null;
    },
  };
}
