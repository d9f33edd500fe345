// `payments listen`: the merchant's events, as they happen, forwarded to a URL on the developer's machine,
// signed as real deliveries are (docs/cli.md). Only an outbound WebSocket to the service (graphql-ws, the
// paymentEvents subscription) and local HTTP POSTs: the laptop need not be reachable. The service signs each
// event (Event.deliveryHeaders) with the profile's key, so the CLI never holds it.
import http from 'node:http';
import https from 'node:https';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createTransport, errorOf, type GraphQLErrorShape } from '@payments-orchestrator/client-core';
import {
  CliBusinessProfilesDocument,
  CliNewestEventDocument,
  CliPaymentEventsDocument,
  type CliPaymentEventsSubscription,
  type EventType,
} from '../gql/graphql.ts';
import type { Settings } from './settings.ts';

type ListenedEvent = CliPaymentEventsSubscription['paymentEvents'];

export interface ListenOptions extends Settings {
  forwardTo: string;
  /** Event types in the webhook's spelling (payment_succeeded); all when absent. */
  events?: string[];
  /** Start after this event: the ones since then first, then live ones. */
  after?: string;
  profileId?: string;
  /** Where each line goes (stdout). */
  print: (line: string) => void;
}

/** How long a local POST may take: the service's default for real deliveries (WEBHOOK_TIMEOUT_MS, docs/configuration.md). */
const FORWARD_TIMEOUT_MS = 15_000;

/** What the local endpoint did with one event. */
export type ForwardOutcome = { status: number; latencyMs: number } | { error: string; latencyMs: number };

/** A closed socket is reopened after 1 s, 2 s, 4 s … at most this long. */
const MAX_RECONNECT_DELAY_MS = 10_000;
/** Close codes after which reconnecting cannot help: the key was refused or revoked (graphql-ws 4403, 4401). */
const FATAL_CLOSE_CODES = new Set([4401, 4403]);

/** POSTs the event's body with its signed headers, as src/modules/events' sender does (no redirects followed). */
function forward(url: URL, event: Pick<ListenedEvent, 'body' | 'deliveryHeaders'>, timeoutMs: number): Promise<ForwardOutcome> {
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

/**
 * Listens until `signal` aborts (resolves) or the service refuses the subscription for good (rejects). A dropped
 * socket is reopened with `after` the last event received, so nothing is missed or forwarded twice.
 */
export async function listen(options: ListenOptions, signal: AbortSignal): Promise<void> {
  const target = new URL(options.forwardTo);
  const api = createTransport({ apiKey: options.apiKey, baseUrl: options.baseUrl });
  const profileId = options.profileId ?? (await api.request(CliBusinessProfilesDocument, {})).businessProfiles.find((profile) => profile.isDefault)?.id;
  if (profileId === undefined) throw new Error('this merchant has no default business profile: name one with --profile');
  const eventTypes = options.events?.map((type) => type.toUpperCase() as EventType);
  // Without --after, the merchant's newest event is where a reconnect without any event received resumes from.
  let after: string | null = options.after ?? (await api.request(CliNewestEventDocument, {})).events.edges[0]?.node.id ?? null;
  // From here on nothing is missed: the subscription starts after `after` (a merchant with no event yet: from when it opens).
  options.print(`ready: events of ${profileId}${eventTypes ? ` (${options.events!.join(', ')})` : ''} after ${after ?? 'now'} → ${options.forwardTo}`);
  const queue: ListenedEvent[] = [];
  let running = true;
  let wake = () => {};
  const forwarding = (async () => {
    while (running && !signal.aborted) {
      const event = queue.shift();
      if (event === undefined) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      options.print(formatLine(event, await forward(target, event, FORWARD_TIMEOUT_MS)));
    }
  })();
  signal.addEventListener('abort', () => wake(), { once: true });

  let failures = 0;
  try {
    while (!signal.aborted) {
      const ended = await subscribeOnce(options, { profileId, eventTypes, after }, signal, (event) => {
        after = event.id;
        failures = 0;
        queue.push(event);
        wake();
      });
      if (ended.kind === 'fatal') throw ended.error;
      if (signal.aborted) break;
      const delayMs = Math.min(MAX_RECONNECT_DELAY_MS, 1000 * 2 ** failures++);
      options.print(`connection lost (${ended.reason}); reconnecting in ${delayMs / 1000} s from ${after ?? 'now'}`);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  } finally {
    running = false;
    wake();
    await forwarding;
  }
}

type SubscriptionEnd = { kind: 'closed'; reason: string } | { kind: 'fatal'; error: Error };

/** One socket and one subscription, until the socket closes or the service ends or refuses the subscription. */
function subscribeOnce(
  settings: Settings,
  variables: { profileId: string; eventTypes: EventType[] | undefined; after: string | null },
  signal: AbortSignal,
  onEvent: (event: ListenedEvent) => void,
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
    const end = (outcome: SubscriptionEnd) => {
      signal.removeEventListener('abort', abort);
      void client.dispose();
      resolve(outcome);
    };
    const abort = () => end({ kind: 'closed', reason: 'stopped' });
    signal.addEventListener('abort', abort, { once: true });
    client.subscribe<CliPaymentEventsSubscription>(
      { query: CliPaymentEventsDocument.toString(), variables },
      {
        next: (result) => {
          if (result.errors?.length) end({ kind: 'fatal', error: errorOf(result.errors as GraphQLErrorShape[]) });
          else if (result.data) onEvent(result.data.paymentEvents);
        },
        error: (error) => {
          if (Array.isArray(error)) return end({ kind: 'fatal', error: errorOf(error as GraphQLErrorShape[]) });
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
