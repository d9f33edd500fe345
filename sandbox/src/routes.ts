// The sandbox API's routes under a personality's prefix: payments, sessions, refunds, disputes, saved cards and
// payouts (each resource's logic is in its own file), every POST idempotent, and the callback routes.
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { registerEndpointSchema } from './callbacks.ts';
import {
  MAX_EVIDENCE_BODY_BYTES,
  actOnDispute,
  findDispute,
  isDisputeAction,
  listDisputes,
  openDispute,
  openDisputeSchema,
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
import type { Personality } from './personality.ts';
import { createRefund, createRefundSchema, findRefund, findRefundByReference, isReviewDecision, reviewRefund } from './refunds.ts';
import { deliveryObject, endpointObject, resourceObject } from './render.ts';
import { ApiError, authenticate, idempotencyKey, millisecondsHeader, parseInput, readJson, type JsonReply } from './requests.ts';
import type { Resource } from './resources.ts';
import { requestFingerprint, type SandboxStore } from './store.ts';

/** The server's settings the routes use: where browsers reach it, and its delays (in ms) of what settles later. */
export interface RouteSettings {
  publicUrl: string;
  /** A create's `x-sandbox-settle-ms` header overrides each delay. */
  bankDebitSettleMs: number;
  refundSettleMs: number;
  payoutSettleMs: number;
}

const MAX_SETTLE_MS = 600_000;
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

async function routeApi(settings: RouteSettings, personality: Personality, request: IncomingMessage, url: URL): Promise<RouteResult<Resource | DisputeList>> {
  const apiKey = authenticate(request, personality.processor);
  const { store } = personality;
  const method = request.method ?? 'GET';
  const fullPath = url.pathname;
  const path = fullPath.slice(personality.processor.apiPrefix.length);
  /** A create's settlement delay: its `x-sandbox-settle-ms` header, or the server's `configured` one. */
  const settleMs = (configured: number) => millisecondsHeader(request, 'x-sandbox-settle-ms', MAX_SETTLE_MS) ?? configured;
  if (path === '/payments' && method === 'GET') return { httpStatus: 200, resource: findPaymentByReference(store, apiKey, url.searchParams) };
  if (path === '/payments' && method === 'POST') {
    const delayMs = settleMs(settings.bankDebitSettleMs);
    return idempotentPost(store, request, apiKey, fullPath, createPaymentSchema, (input) => createPayment(personality, apiKey, input, delayMs));
  }
  if (path === '/refunds' && method === 'GET') return { httpStatus: 200, resource: findRefundByReference(store, apiKey, url.searchParams) };
  if (path === '/refunds' && method === 'POST') {
    const delayMs = settleMs(settings.refundSettleMs);
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
    const delayMs = settleMs(settings.payoutSettleMs);
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

/** The answer to an API request under `personality`'s prefix: a callback route's, or the resource a route produced. */
export async function answerApi(settings: RouteSettings, personality: Personality, request: IncomingMessage, url: URL): Promise<JsonReply> {
  if (CALLBACK_PATHS.has(url.pathname.slice(personality.processor.apiPrefix.length))) return routeCallbacks(personality, request, url);
  const { httpStatus, resource, replayed } = await routeApi(settings, personality, request, url);
  return {
    status: httpStatus,
    body: resourceObject(resource, settings.publicUrl),
    ...(replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}),
  };
}
