// The sandbox processors: a separate HTTP server that behaves like real processors (Stripe-like JSON APIs
// with secret keys, idempotency keys and declines, for every payment method group, with saved cards charged
// off session and revoked, refunds, disputes, payouts, the customer's pages and wallet sheet), so the service
// calls it over HTTP exactly as it would call real ones.
// It plays each personality of PROCESSORS under its own path prefix (`/v1`, `/fauxpay/v1`), and sends the
// signed callbacks of those that have webhooks.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { SandboxConfig } from '../platform/config.ts';
import { listen, reachableHost } from '../platform/http/listen.ts';
import { sendJson } from '../platform/http/node-bridge.ts';
import { Callbacks, DEFAULT_CALLBACK_RETRY_DELAYS_MS, registerEndpointSchema, type Delivery, type Endpoint } from './callbacks.ts';
import { handleCustomerRequest, nextAction } from './customer.ts';
import {
  MAX_EVIDENCE_BODY_BYTES,
  actOnDispute,
  evidenceDueByMs,
  findDispute,
  isDisputeAction,
  listDisputes,
  openDispute,
  openDisputeSchema,
  scheduleDisputeOpening,
  submitEvidence,
  submitEvidenceSchema,
  type DisputeList,
} from './disputes.ts';
import { findPaymentMethod, revokePaymentMethod } from './payment-methods.ts';
import {
  cancelPayment,
  capturePayment,
  captureSchema,
  createPayment,
  createPaymentSchema,
  createSession,
  createSessionSchema,
  findPayment,
  findPaymentByReference,
  noParametersSchema,
  settlePushedPayment,
  type RouteResult,
} from './payments.ts';
import { actOnPayout, createPayout, createPayoutSchema, findPayout, findPayoutByReference, isPayoutAction } from './payouts.ts';
import { PROCESSORS, type Personality, type Processor } from './processors.ts';
import { createRefund, createRefundSchema, findRefund, findRefundByReference, isReviewDecision, reviewRefund } from './refunds.ts';
import { ApiError, answerOrRefusal, authenticate, idempotencyKey, millisecondsHeader, parseInput, readJson, type JsonReply } from './requests.ts';
import {
  SandboxStore,
  requestFingerprint,
  type CardSummary,
  type Dispute,
  type Payment,
  type Payout,
  type Refund,
  type Resource,
  type SavedCard,
  type WalletSession,
} from './store.ts';

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
}

export interface Sandbox {
  url: string;
  close(): Promise<void>;
}

const MAX_LATENCY_MS = 30_000;
const MAX_SETTLE_MS = 600_000;
const DEFAULT_BANK_DEBIT_SETTLE_MS = 3000;
const DEFAULT_REFUND_SETTLE_MS = 3000;
const DEFAULT_DISPUTE_OPEN_MS = 3000;
const DEFAULT_PAYOUT_SETTLE_MS = 3000;
// API paths, after the personality's prefix.
const PAYMENT_PATH = /^\/payments\/([^/]+)(?:\/(capture|cancel))?$/;
const TEST_HELPER_PATH = /^\/test_helpers\/payments\/([^/]+)\/(fund|expire|dispute)$/;
const REFUND_PATH = /^\/refunds\/([^/]+)$/;
const REFUND_HELPER_PATH = /^\/test_helpers\/refunds\/([^/]+)\/([a-z]+)$/;
const DISPUTE_PATH = /^\/disputes\/([^/]+)$/;
/** The merchant's actions on a dispute, and (under test_helpers) the network's. */
const DISPUTE_ACTION_PATH = /^\/(test_helpers\/)?disputes\/([^/]+)\/([a-z]+)$/;
const PAYMENT_METHOD_PATH = /^\/payment_methods\/([^/]+)$/;
/** The merchant's revocation of a saved card, and (under test_helpers) the customer's bank's. */
const PAYMENT_METHOD_REVOKE_PATH = /^\/(test_helpers\/)?payment_methods\/([^/]+)\/revoke$/;
const PAYOUT_PATH = /^\/payouts\/([^/]+)$/;
/** The merchant's moves of a payout, and (under test_helpers) the bank's. */
const PAYOUT_ACTION_PATH = /^\/(test_helpers\/)?payouts\/([^/]+)\/([a-z]+)$/;
const CALLBACK_PATHS = new Set(['/webhook_endpoints', '/webhook_deliveries']);

interface Context {
  personalities: readonly Personality[];
  latencyMs: number;
  publicUrl: string;
  bankDebitSettleMs: number;
  refundSettleMs: number;
  payoutSettleMs: number;
}

/** What every personality the server plays shares. */
interface Playing {
  publicUrl: string;
  retryDelaysMs: readonly number[];
  disputeOpenMs: number;
}

/** What a payment or a saved card shows of its card: never the number. */
function cardObject(card: CardSummary) {
  return { brand: card.brand, last4: card.last4, exp_month: card.expMonth, exp_year: card.expYear };
}

function paymentObject(payment: Payment, publicUrl: string) {
  const { card } = payment;
  return {
    id: payment.id,
    object: 'payment',
    status: payment.status,
    amount: payment.amount,
    amount_capturable: payment.amountCapturable,
    amount_captured: payment.amountCaptured,
    canceled_after_capture: payment.canceledAfterCapture,
    currency: payment.currency,
    capture_method: payment.captureMethod,
    reference: payment.reference,
    payment_method_type: payment.paymentMethodType,
    card: card && cardObject(card),
    bank_debit: payment.bankDebit && { last4: payment.bankDebit.last4 },
    payment_method_token: payment.paymentMethodToken,
    next_action: nextAction(payment, publicUrl),
    error: payment.error,
    created: Math.floor(payment.createdMs / 1000),
    updated_ms: payment.updatedMs,
  };
}

function disputeObject(dispute: Dispute) {
  return {
    id: dispute.id,
    object: 'dispute',
    payment: dispute.paymentId,
    amount: dispute.amount,
    currency: dispute.currency,
    status: dispute.status,
    reason: dispute.reason,
    evidence_due_by: Math.floor(evidenceDueByMs(dispute) / 1000),
    evidence: dispute.evidence,
    created: Math.floor(dispute.createdMs / 1000),
    updated_ms: dispute.updatedMs,
  };
}

function refundObject(refund: Refund) {
  return {
    id: refund.id,
    object: 'refund',
    payment: refund.paymentId,
    amount: refund.amount,
    currency: refund.currency,
    status: refund.status,
    reason: refund.reason,
    reference: refund.reference,
    error: refund.error,
    created: Math.floor(refund.createdMs / 1000),
    updated_ms: refund.updatedMs,
  };
}

function paymentMethodObject(savedCard: SavedCard) {
  return {
    id: savedCard.id,
    object: 'payment_method',
    status: savedCard.status,
    card: cardObject(savedCard.card),
    created: Math.floor(savedCard.createdMs / 1000),
    updated_ms: savedCard.updatedMs,
  };
}

function payoutObject(payout: Payout) {
  return {
    id: payout.id,
    object: 'payout',
    amount: payout.amount,
    currency: payout.currency,
    status: payout.status,
    destination: { type: payout.destination.type, last4: payout.destination.last4 },
    reference: payout.reference,
    error: payout.error,
    created: Math.floor(payout.createdMs / 1000),
    updated_ms: payout.updatedMs,
  };
}

/** A session as its creator sees it; the payment token of the customer's answer is never part of it. */
function sessionObject(session: WalletSession) {
  return {
    id: session.id,
    object: 'session',
    wallet: session.wallet,
    session_token: session.token,
    amount: session.amount,
    currency: session.currency,
    expires_at: Math.floor(session.expiresMs / 1000),
  };
}

/** An endpoint as its key sees it: never its secret. */
function endpointObject(endpoint: Endpoint) {
  return { id: endpoint.id, url: endpoint.url, created: Math.floor(endpoint.createdMs / 1000) };
}

/** What a route produced, as the API answers it (and a callback carries it): rendered by its `object`. */
function resourceObject(resource: Resource | DisputeList, publicUrl: string): unknown {
  switch (resource.object) {
    case 'payment':
      return paymentObject(resource, publicUrl);
    case 'refund':
      return refundObject(resource);
    case 'dispute':
      return disputeObject(resource);
    case 'payment_method':
      return paymentMethodObject(resource);
    case 'payout':
      return payoutObject(resource);
    case 'session':
      return sessionObject(resource);
    case 'list':
      return { data: resource.data.map((item) => resourceObject(item, publicUrl)) };
  }
}

function deliveryObject(delivery: Delivery) {
  return {
    event_id: delivery.eventId,
    type: delivery.type,
    object_id: delivery.objectId,
    payment_id: delivery.paymentId,
    url: delivery.endpoint.url,
    attempts: delivery.attempts,
    last_status: delivery.lastStatus,
    delivered: delivery.delivered,
  };
}

/**
 * Runs a POST route once per Idempotency-Key: a repeat with the same request answers with what the first
 * one produced (as it is now), a repeat with another request is refused. Only requests that produced a
 * resource are recorded, so a refused request may be retried with its key. Nothing awaits between the lookup
 * and the record, so two concurrent requests with one key cannot both run. `maxBodyBytes` is for a route
 * whose body may be larger than the others' (requests.ts).
 */
async function idempotentPost<T>(
  store: SandboxStore,
  request: IncomingMessage,
  apiKey: string,
  path: string,
  schema: z.ZodType<T>,
  execute: (input: T) => RouteResult,
  maxBodyBytes?: number,
): Promise<RouteResult> {
  const key = idempotencyKey(request);
  const body = await readJson(request, maxBodyBytes);
  if (key === undefined) return execute(parseInput(schema, body));
  const fingerprint = requestFingerprint(path, body);
  const record = store.idempotencyRecord(apiKey, key);
  if (record) {
    if (record.fingerprint !== fingerprint) throw new ApiError(409, 'idempotency_mismatch', 'This Idempotency-Key was already used with a different request.');
    return { httpStatus: record.httpStatus, resource: record.resource, replayed: true };
  }
  const result = execute(parseInput(schema, body));
  store.saveIdempotencyRecord(apiKey, key, { fingerprint, resource: result.resource, httpStatus: result.httpStatus });
  return result;
}

async function routeApi(context: Context, personality: Personality, request: IncomingMessage, url: URL): Promise<RouteResult<Resource | DisputeList>> {
  const apiKey = authenticate(request, personality.processor);
  const { store } = personality;
  const method = request.method ?? 'GET';
  const fullPath = url.pathname;
  const path = fullPath.slice(personality.processor.apiPrefix.length);
  /** A create's settlement delay: its `x-sandbox-settle-ms` header, or the server's `configured` one. */
  const settleMs = (configured: number) => millisecondsHeader(request, 'x-sandbox-settle-ms', MAX_SETTLE_MS) ?? configured;
  if (path === '/payments' && method === 'GET') return { httpStatus: 200, resource: findPaymentByReference(store, apiKey, url.searchParams) };
  if (path === '/payments' && method === 'POST') {
    const delayMs = settleMs(context.bankDebitSettleMs);
    return idempotentPost(store, request, apiKey, fullPath, createPaymentSchema, (input) => createPayment(personality, apiKey, input, delayMs));
  }
  if (path === '/refunds' && method === 'GET') return { httpStatus: 200, resource: findRefundByReference(store, apiKey, url.searchParams) };
  if (path === '/refunds' && method === 'POST') {
    const delayMs = settleMs(context.refundSettleMs);
    return idempotentPost(store, request, apiKey, fullPath, createRefundSchema, (input) => createRefund(store, apiKey, input, delayMs));
  }
  if (path === '/sessions' && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, createSessionSchema, (input) => createSession(personality, apiKey, input));
  }
  const [, id, operation] = PAYMENT_PATH.exec(path) ?? [];
  if (id !== undefined && operation === undefined && method === 'GET') return { httpStatus: 200, resource: findPayment(store, apiKey, id) };
  if (id !== undefined && operation === 'capture' && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, captureSchema, (input) => capturePayment(store, apiKey, id, input));
  }
  if (id !== undefined && operation === 'cancel' && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, noParametersSchema, () => cancelPayment(store, apiKey, id));
  }
  const [, helperId, helper] = TEST_HELPER_PATH.exec(path) ?? [];
  if (helperId !== undefined && helper === 'dispute' && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, openDisputeSchema, (input) => openDispute(store, apiKey, helperId, input));
  }
  if (helperId !== undefined && (helper === 'fund' || helper === 'expire') && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, noParametersSchema, () => settlePushedPayment(store, apiKey, helperId, helper));
  }
  const [, refundId] = REFUND_PATH.exec(path) ?? [];
  if (refundId !== undefined && method === 'GET') return { httpStatus: 200, resource: findRefund(store, apiKey, refundId) };
  const [, reviewedId, decision] = REFUND_HELPER_PATH.exec(path) ?? [];
  if (reviewedId !== undefined && decision !== undefined && isReviewDecision(decision) && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, noParametersSchema, () => reviewRefund(store, apiKey, reviewedId, decision));
  }
  if (path === '/disputes' && method === 'GET') return listDisputes(store, apiKey, url.searchParams);
  const [, disputeId] = DISPUTE_PATH.exec(path) ?? [];
  if (disputeId !== undefined && method === 'GET') return { httpStatus: 200, resource: findDispute(store, apiKey, disputeId) };
  const [, helperPrefix, actedOnId, action] = DISPUTE_ACTION_PATH.exec(path) ?? [];
  if (actedOnId !== undefined && action !== undefined && isDisputeAction(action, helperPrefix ? 'network' : 'merchant') && method === 'POST') {
    if (action === 'evidence') {
      const submit = (input: z.infer<typeof submitEvidenceSchema>) => submitEvidence(store, apiKey, actedOnId, input);
      return idempotentPost(store, request, apiKey, fullPath, submitEvidenceSchema, submit, MAX_EVIDENCE_BODY_BYTES);
    }
    return idempotentPost(store, request, apiKey, fullPath, noParametersSchema, () => actOnDispute(store, apiKey, actedOnId, action));
  }
  const [, token] = PAYMENT_METHOD_PATH.exec(path) ?? [];
  if (token !== undefined && method === 'GET') return { httpStatus: 200, resource: findPaymentMethod(store, apiKey, token) };
  const [, revokerPrefix, revokedToken] = PAYMENT_METHOD_REVOKE_PATH.exec(path) ?? [];
  if (revokedToken !== undefined && method === 'POST') {
    const by = revokerPrefix ? 'bank' : 'merchant';
    return idempotentPost(store, request, apiKey, fullPath, noParametersSchema, () => revokePaymentMethod(store, apiKey, revokedToken, by));
  }
  if (path === '/payouts' && method === 'GET') return { httpStatus: 200, resource: findPayoutByReference(store, apiKey, url.searchParams) };
  if (path === '/payouts' && method === 'POST') {
    const delayMs = settleMs(context.payoutSettleMs);
    return idempotentPost(store, request, apiKey, fullPath, createPayoutSchema, (input) => createPayout(store, apiKey, input, delayMs));
  }
  const [, payoutId] = PAYOUT_PATH.exec(path) ?? [];
  if (payoutId !== undefined && method === 'GET') return { httpStatus: 200, resource: findPayout(store, apiKey, payoutId) };
  const [, payoutHelperPrefix, movedId, move] = PAYOUT_ACTION_PATH.exec(path) ?? [];
  if (movedId !== undefined && move !== undefined && isPayoutAction(move, payoutHelperPrefix ? 'bank' : 'merchant') && method === 'POST') {
    return idempotentPost(store, request, apiKey, fullPath, noParametersSchema, () => actOnPayout(store, apiKey, movedId, move));
  }
  throw new ApiError(404, 'not_found', `There is no route ${method} ${fullPath}.`);
}

/** The callback routes: a key's endpoint (registered again to replace it) and what was sent to it. */
async function routeCallbacks({ processor, callbacks }: Personality, request: IncomingMessage, url: URL): Promise<JsonReply> {
  const apiKey = authenticate(request, processor);
  if (callbacks === null) throw new ApiError(404, 'webhooks_not_supported', 'This processor has no webhooks; sync payments instead.');
  const method = request.method ?? 'GET';
  const path = url.pathname.slice(processor.apiPrefix.length);
  if (path === '/webhook_endpoints' && method === 'POST') {
    const endpoint = callbacks.register(apiKey, parseInput(registerEndpointSchema, await readJson(request)));
    return { status: 200, body: endpointObject(endpoint) };
  }
  if (path === '/webhook_endpoints' && method === 'GET') return { status: 200, body: { data: callbacks.endpointsOf(apiKey).map(endpointObject) } };
  if (path === '/webhook_deliveries' && method === 'GET') return { status: 200, body: { data: callbacks.deliveriesOf(apiKey).map(deliveryObject) } };
  throw new ApiError(404, 'not_found', `There is no route ${method} ${url.pathname}.`);
}

async function handleApi(context: Context, personality: Personality, request: IncomingMessage, reply: ServerResponse, url: URL): Promise<void> {
  let latencyMs = context.latencyMs;
  const answer: JsonReply = await answerOrRefusal(async () => {
    latencyMs = millisecondsHeader(request, 'x-sandbox-latency-ms', MAX_LATENCY_MS) ?? latencyMs;
    if (CALLBACK_PATHS.has(url.pathname.slice(personality.processor.apiPrefix.length))) return routeCallbacks(personality, request, url);
    const { httpStatus, resource, replayed } = await routeApi(context, personality, request, url);
    return {
      status: httpStatus,
      body: resourceObject(resource, context.publicUrl),
      ...(replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}),
    };
  });
  // The work is done before the delay, as with a slow processor: a caller that times out may find the payment later.
  if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
  if (!reply.destroyed) sendJson(reply, answer.status, answer.body, answer.headers);
}

async function handleRequest(context: Context, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://sandbox');
  const path = url.pathname;
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
  return { processor, store, callbacks };
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
  });
}
