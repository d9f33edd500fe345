// The sandbox processors: a separate HTTP server that behaves like real processors (Stripe-like JSON APIs
// with secret keys, idempotency keys and declines, for every payment method group, with saved cards charged
// off session and revoked, refunds, disputes, payouts, the customer's pages and wallet sheet), so the service
// calls it over HTTP exactly as it would call real ones.
// It plays each personality of PROCESSORS under its own path prefix (`/v1`, `/fauxpay/v1`), and sends the
// signed callbacks of those that have webhooks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Callbacks, DEFAULT_CALLBACK_RETRY_DELAYS_MS } from './callbacks.ts';
import type { SandboxConfig } from './config.ts';
import { ProcessorControl, answerControl } from './control.ts';
import { handleCustomerRequest } from './customer.ts';
import { scheduleDisputeOpening } from './disputes.ts';
import { listen, reachableHost, sendJson } from './http.ts';
import type { Personality } from './personality.ts';
import { PROCESSORS, type Processor } from './processors.ts';
import { resourceObject } from './render.ts';
import { answerOrRefusal, millisecondsHeader, type JsonReply } from './requests.ts';
import { answerApi, type RouteSettings } from './routes.ts';
import { SandboxStore } from './store.ts';

export interface SandboxOptions {
  port: number;
  host?: string;
  /** Delay of every API response, in ms; a request's `x-sandbox-latency-ms` header overrides it. */
  latencyMs?: number;
  /** Where browsers reach the sandbox; the customer's page URLs are built from it. Default: the listening URL. */
  publicUrl?: string;
  /** How long a bank debit stays processing before it settles, in ms (default 3000); a create's `x-sandbox-settle-ms` header overrides it. */
  bankDebitSettleMs?: number;
  /** How long a pending refund (refund test cards) waits to settle, in ms (default 3000); a create's `x-sandbox-settle-ms` header overrides it. */
  refundSettleMs?: number;
  /** How long after its payment succeeded the dispute test card's dispute opens, in ms (default 3000). */
  disputeOpenMs?: number;
  /** How long each step of a payout takes (pending to in_transit, in_transit to paid, ...), in ms (default 3000); a create's `x-sandbox-settle-ms` header overrides it. */
  payoutSettleMs?: number;
  /** The waits before each retry of a callback that failed, in ms (default 1 s, 5 s, 30 s, 2 min). */
  callbackRetryDelaysMs?: readonly number[];
  /** The token `/_control` requires (`Authorization: Bearer <token>`); without one it is open, for a sandbox that is not exposed. */
  controlToken?: string;
}

export interface Sandbox {
  url: string;
  close(): Promise<void>;
}

const MAX_LATENCY_MS = 30_000;
const DEFAULT_BANK_DEBIT_SETTLE_MS = 3000;
const DEFAULT_REFUND_SETTLE_MS = 3000;
const DEFAULT_DISPUTE_OPEN_MS = 3000;
const DEFAULT_PAYOUT_SETTLE_MS = 3000;
/** Steering the processors (control.ts): outside every personality's prefix, so an outage never closes it. */
const CONTROL_PATH = '/_control';

interface Context extends RouteSettings {
  personalities: readonly Personality[];
  latencyMs: number;
  controlToken: string | undefined;
}

/** What every personality the server plays shares. */
interface Playing {
  publicUrl: string;
  retryDelaysMs: readonly number[];
  disputeOpenMs: number;
}

async function handleApi(context: Context, personality: Personality, request: IncomingMessage, reply: ServerResponse, url: URL): Promise<void> {
  let latencyMs = context.latencyMs;
  const answer: JsonReply = await answerOrRefusal(async () => {
    latencyMs = millisecondsHeader(request, 'x-sandbox-latency-ms', MAX_LATENCY_MS) ?? latencyMs;
    personality.control.requireAvailable();
    return answerApi(context, personality, request, url);
  });
  // The work is done before the delay, as with a slow processor: a caller that times out may find the payment later.
  if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
  sendAnswer(reply, answer);
}

function sendAnswer(reply: ServerResponse, answer: JsonReply): void {
  if (!reply.destroyed) sendJson(reply, answer.status, answer.body, answer.headers);
}

async function handleRequest(context: Context, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://sandbox');
  const path = url.pathname;
  if (path === CONTROL_PATH)
    return sendAnswer(
      reply,
      await answerOrRefusal(() =>
        answerControl(
          context.personalities.map(({ control }) => control),
          context.controlToken,
          request,
          url,
        ),
      ),
    );
  const personality = context.personalities.find(({ processor }) => path.startsWith(`${processor.apiPrefix}/`));
  if (personality) return handleApi(context, personality, request, reply, url);
  if (await handleCustomerRequest(context.personalities, request, reply, path)) return;
  sendJson(reply, 404, { error: { code: 'not_found', message: `There is no route ${request.method} ${path}.` } });
}

/**
 * A processor's row brought to life: its store, which opens the dispute test card's disputes, and its callbacks
 * (rendering what changed as GET answers it) if it has webhooks.
 */
function play(processor: Processor, { publicUrl, retryDelaysMs, disputeOpenMs }: Playing): Personality {
  const callbacks = processor.webhooks ? new Callbacks({ retryDelaysMs, render: (changed) => resourceObject(changed, publicUrl) }) : null;
  const store: SandboxStore = new SandboxStore({
    notify: (changed) => callbacks?.changed(changed),
    paymentSucceeded: (payment) => scheduleDisputeOpening(store, payment, disputeOpenMs),
  });
  return { processor, store, callbacks, control: new ProcessorControl(processor.name) };
}

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer();
  const url = `http://${reachableHost(host)}:${await listen(server, options.port, host)}`;
  const publicUrl = (options.publicUrl ?? url).replace(/\/+$/, '');
  const playing: Playing = {
    publicUrl,
    retryDelaysMs: options.callbackRetryDelaysMs ?? DEFAULT_CALLBACK_RETRY_DELAYS_MS,
    disputeOpenMs: options.disputeOpenMs ?? DEFAULT_DISPUTE_OPEN_MS,
  };
  const context: Context = {
    personalities: PROCESSORS.map((processor) => play(processor, playing)),
    latencyMs: options.latencyMs ?? 0,
    controlToken: options.controlToken,
    publicUrl,
    bankDebitSettleMs: options.bankDebitSettleMs ?? DEFAULT_BANK_DEBIT_SETTLE_MS,
    refundSettleMs: options.refundSettleMs ?? DEFAULT_REFUND_SETTLE_MS,
    payoutSettleMs: options.payoutSettleMs ?? DEFAULT_PAYOUT_SETTLE_MS,
  };
  server.on('request', (request: IncomingMessage, reply: ServerResponse) => {
    handleRequest(context, request, reply).catch((error: unknown) => {
      process.stderr.write(`sandbox: unhandled error for ${request.method} ${request.url}: ${(error as Error).stack}\n`);
      if (!reply.headersSent) sendJson(reply, 500, { error: { code: 'internal_error', message: 'The sandbox failed unexpectedly.' } });
      else reply.destroy();
    });
  });
  return {
    url,
    close: () => {
      // Settlements and callbacks stop first, so nothing is sent by a server that is closing.
      for (const { store, callbacks } of context.personalities) {
        store.close();
        callbacks?.close();
      }
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** Starts the sandbox with its environment settings (its own role, or inside the demo). */
export function startSandboxFromConfig(config: SandboxConfig): Promise<Sandbox> {
  return startSandbox({
    port: config.SANDBOX_PORT,
    host: config.SANDBOX_HOST,
    latencyMs: config.SANDBOX_LATENCY_MS,
    publicUrl: config.SANDBOX_PUBLIC_URL,
    bankDebitSettleMs: config.SANDBOX_BANK_DEBIT_SETTLE_MS,
    refundSettleMs: config.SANDBOX_REFUND_SETTLE_MS,
    disputeOpenMs: config.SANDBOX_DISPUTE_OPEN_MS,
    payoutSettleMs: config.SANDBOX_PAYOUT_SETTLE_MS,
    callbackRetryDelaysMs: config.SANDBOX_CALLBACK_RETRY_DELAYS_MS,
    controlToken: config.SANDBOX_CONTROL_TOKEN,
  });
}
