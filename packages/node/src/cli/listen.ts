// `payments listen`: the merchant's events, as they happen, forwarded to a URL on the developer's machine,
// signed as real deliveries are (docs/cli.md). Only an outbound WebSocket to the service (graphql-ws, the
// paymentEvents subscription), a query per event and local HTTP POSTs: the laptop need not be reachable. The
// service signs each event (Event.deliveryHeaders) with the profile's key right before its POST, so the CLI never
// holds the key and webhook-timestamp is the forwarding time however long the queue.
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { AuthenticationError, createTransport, errorOf, PermissionError, type GraphQLErrorShape } from '@payments-orchestrator/client-core';
import { Payments } from '../client.ts';
import {
  CliEventToForwardDocument,
  CliNewestEventDocument,
  CliPaymentEventsDocument,
  type CliEventToForwardQuery,
  type CliPaymentEventsSubscription,
  type EventType,
} from '../gql/graphql.ts';
import { firstOf } from './first-of.ts';
import type { Settings } from './settings.ts';

type ListenedEvent = CliPaymentEventsSubscription['paymentEvents'];
type SignedEvent = CliEventToForwardQuery['event'];

export interface ListenOptions extends Settings {
  forwardTo: string;
  /** Event types in the webhook's spelling (payment_succeeded); all when absent. */
  events?: string[];
  /** Start after this event: the ones since then first, then live ones. */
  after?: string;
  profileId?: string;
  /** Where each line goes (stdout). */
  print: (line: string) => void;
  /** How long a local POST may take: the service's default for real deliveries (WEBHOOK_TIMEOUT_MS, docs/configuration.md). */
  forwardTimeoutMs?: number;
  /** Events read but not yet forwarded; when this many wait, the socket is closed until they are forwarded. */
  maxQueued?: number;
}

const FORWARD_TIMEOUT_MS = 15_000;
const MAX_QUEUED = 100;
/**
 * How far before the newest event received a reconnect resumes: events are ordered by creation time, taken from
 * each process's clock before its insert commits, so one committed while the socket was down can be older than
 * the last one received (docs/subscriptions.md). The replayed ones already received are skipped.
 */
export const LOOK_BACK_MS = 30_000;
/** Events remembered (id and creation time): to resume from, and to skip when replayed. */
const REMEMBERED_EVENTS = 1_000;

/** What the local endpoint did with one event. */
export type ForwardOutcome = { status: number; latencyMs: number } | { error: string; latencyMs: number };

/** A closed socket is reopened, and a failed read of an event retried, after 1 s, 2 s, 4 s … at most this long. */
const MAX_RETRY_DELAY_MS = 10_000;
const retryDelayMs = (failures: number) => Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** failures);
/** Close codes after which reconnecting cannot help: the key was refused or revoked (graphql-ws 4403, 4401). */
const FATAL_CLOSE_CODES = new Set([4401, 4403]);
/** Only a refused key ends the command; anything else (SERVICE_UNAVAILABLE, the network) is retried. */
const isFatal = (error: unknown) => error instanceof AuthenticationError || error instanceof PermissionError;

/** POSTs the event's body with its signed headers, as src/modules/events' sender does (no redirects followed). */
function forward(url: URL, event: SignedEvent, timeoutMs: number): Promise<ForwardOutcome> {
  const started = performance.now();
  const latencyMs = () => Math.round(performance.now() - started);
  const headers = Object.fromEntries(event.deliveryHeaders.map(({ name, value }) => [name, value]));
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(event.body) },
      signal: AbortSignal.timeout(timeoutMs),
    });
    request.on('response', (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, latencyMs: latencyMs() });
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.name === 'AbortError' ? `no response within ${timeoutMs} ms` : (error.code ?? error.message), latencyMs: latencyMs() }),
    );
    request.end(event.body);
  });
}

const formatLine = (event: Pick<ListenedEvent, 'id' | 'eventType'>, outcome: ForwardOutcome, at = new Date()) =>
  [
    at.toISOString(),
    event.eventType.toLowerCase(),
    event.id,
    'status' in outcome ? String(outcome.status) : `error ${outcome.error}`,
    `${outcome.latencyMs}ms`,
  ].join('  ');

/** The events received, oldest first (the last REMEMBERED_EVENTS): where a reconnect resumes, and which to skip. */
class ReceivedEvents {
  readonly #createdAt = new Map<string, number>();

  /** `start`: the event listening began after; never looked back past (its time is not known here). */
  constructor(start: string | null) {
    if (start !== null) this.#createdAt.set(start, Number.NEGATIVE_INFINITY);
  }

  has(id: string): boolean {
    return this.#createdAt.has(id);
  }

  add(event: Pick<ListenedEvent, 'id' | 'createdAt'>): void {
    this.#createdAt.set(event.id, Date.parse(String(event.createdAt)));
    if (this.#createdAt.size > REMEMBERED_EVENTS) this.#createdAt.delete(this.#createdAt.keys().next().value!);
  }

  /** The last event received at least LOOK_BACK_MS before the newest one (else the oldest remembered); null before any. */
  resumePoint(): string | null {
    const newest = Math.max(...this.#createdAt.values());
    let point: string | null = null;
    for (const [id, createdAt] of this.#createdAt) if (point === null || createdAt <= newest - LOOK_BACK_MS) point = id;
    return point;
  }
}

/** `attempt` until it succeeds, a line printed for each failure; a refused key, or `signal`, ends it (rejects). */
async function retrying<T>(what: string, attempt: () => Promise<T>, print: (line: string) => void, signal: AbortSignal): Promise<T> {
  for (let failures = 0; ; failures++) {
    try {
      return await attempt();
    } catch (error) {
      if (isFatal(error) || signal.aborted) throw error;
      const delayMs = retryDelayMs(failures);
      print(`${what} failed (${(error as Error).message}); retrying in ${delayMs / 1000} s`);
      await sleep(delayMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) throw error;
    }
  }
}

/**
 * Listens until `signal` aborts (resolves) or the service refuses the key for good (rejects). A dropped socket
 * is reopened a look-back before the last event received, skipping the ones already received: nothing is
 * missed or forwarded twice.
 */
export async function listen(options: ListenOptions, signal: AbortSignal): Promise<void> {
  const target = new URL(options.forwardTo);
  const forwardTimeoutMs = options.forwardTimeoutMs ?? FORWARD_TIMEOUT_MS;
  const maxQueued = options.maxQueued ?? MAX_QUEUED;
  // One try a request, as the transport's: a failed start ends the command, a failed read of an event is retried by `retrying`.
  const payments = new Payments({ apiKey: options.apiKey, baseUrl: options.baseUrl, maxRetries: 0 });
  const api = createTransport({ apiKey: options.apiKey, baseUrl: options.baseUrl });
  const profileId = options.profileId ?? (await firstOf(payments.businessProfiles.list(), (profile) => profile.isDefault))?.id;
  if (profileId === undefined) throw new Error('this merchant has no default business profile: name one with --profile');
  const eventTypes = options.events?.map((type) => type.toUpperCase() as EventType);
  // Without --after, the merchant's newest event is where a reconnect without any event received resumes from.
  const start: string | null = options.after ?? (await api.request(CliNewestEventDocument, {})).events.edges[0]?.node.id ?? null;
  // From here on nothing is missed: the subscription starts after `start` (a merchant with no event yet: from when it opens).
  options.print(`ready: events of ${profileId}${eventTypes ? ` (${options.events!.join(', ')})` : ''} after ${start ?? 'now'} → ${options.forwardTo}`);
  const received = new ReceivedEvents(start);
  // Stopped by the caller, or by a refused key while forwarding.
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  let refused: unknown;
  const queue: ListenedEvent[] = [];
  let wake = () => {};
  let drained = () => {};
  stopping.signal.addEventListener('abort', () => (wake(), drained()), { once: true });
  const forwarding = (async () => {
    while (!stopping.signal.aborted) {
      const event = queue.shift();
      if (event === undefined) {
        drained();
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      try {
        const signed = await retrying(
          `reading ${event.id}`,
          async () => (await api.request(CliEventToForwardDocument, { id: event.id })).event,
          options.print,
          stopping.signal,
        );
        options.print(formatLine(event, await forward(target, signed, forwardTimeoutMs)));
      } catch (error) {
        if (!stopping.signal.aborted) refused = error;
        stop();
      }
    }
  })();

  let failures = 0;
  try {
    while (!stopping.signal.aborted) {
      const after = received.resumePoint();
      const ended = await subscribeOnce(options, { profileId, eventTypes, after }, stopping.signal, (event) => {
        failures = 0;
        if (received.has(event.id)) return true;
        received.add(event);
        queue.push(event);
        wake();
        return queue.length < maxQueued;
      });
      if (ended.kind === 'fatal') throw ended.error;
      if (stopping.signal.aborted) break;
      if (ended.kind === 'full') {
        // Read no further than the local endpoint keeps up with (each POST may take forwardTimeoutMs).
        options.print(`${queue.length} events waiting for ${options.forwardTo}: reading more once they are forwarded`);
        if (queue.length > 0) await new Promise<void>((resolve) => (drained = resolve));
        continue;
      }
      const delayMs = retryDelayMs(failures++);
      options.print(`connection lost (${ended.reason}); reconnecting in ${delayMs / 1000} s from ${received.resumePoint() ?? 'now'}`);
      await sleep(delayMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  } finally {
    stop();
    await forwarding;
  }
  if (refused !== undefined) throw refused;
}

type SubscriptionEnd = { kind: 'closed'; reason: string } | { kind: 'full' } | { kind: 'fatal'; error: Error };

/**
 * One socket and one subscription, until the socket closes, the service ends or refuses the subscription, or
 * `onEvent` answers false (no more events wanted for now).
 */
function subscribeOnce(
  settings: Settings,
  variables: { profileId: string; eventTypes: EventType[] | undefined; after: string | null },
  signal: AbortSignal,
  onEvent: (event: ListenedEvent) => boolean,
): Promise<SubscriptionEnd> {
  // graphql-ws's own retries would resubscribe with the first `after` and repeat events: this loop retries instead.
  const client: Client = createClient({
    url: `${settings.baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { 'api-key': settings.apiKey },
    retryAttempts: 0,
    keepAlive: 10_000,
  });
  return new Promise<SubscriptionEnd>((resolve) => {
    let ended = false;
    const end = (outcome: SubscriptionEnd) => {
      if (ended) return;
      ended = true;
      signal.removeEventListener('abort', abort);
      void client.dispose();
      resolve(outcome);
    };
    const abort = () => end({ kind: 'closed', reason: 'stopped' });
    signal.addEventListener('abort', abort, { once: true });
    // An error in the stream is the end of this socket: fatal only for a refused key, else reconnected.
    const failed = (errors: GraphQLErrorShape[]) => {
      const error = errorOf(errors);
      end(isFatal(error) ? { kind: 'fatal', error } : { kind: 'closed', reason: error.message });
    };
    client.subscribe<CliPaymentEventsSubscription>(
      { query: CliPaymentEventsDocument.toString(), variables },
      {
        next: (result) => {
          if (ended) return; // read after the queue filled: read again on resuming
          if (result.errors?.length) failed(result.errors as GraphQLErrorShape[]);
          else if (result.data && !onEvent(result.data.paymentEvents)) end({ kind: 'full' });
        },
        error: (error) => {
          if (Array.isArray(error)) return failed(error as GraphQLErrorShape[]);
          const closed = error as { code?: number; reason?: string };
          if (closed.code !== undefined && FATAL_CLOSE_CODES.has(closed.code)) {
            return end({ kind: 'fatal', error: new Error(`the service closed the connection: ${closed.reason || closed.code}`) });
          }
          end({ kind: 'closed', reason: closed.code !== undefined ? `socket closed ${closed.code}` : String((error as Error).message ?? error) });
        },
        complete: () => end({ kind: 'closed', reason: 'the service ended the subscription' }),
      },
    );
  });
}
