// The sandbox card processor: a separate HTTP server that behaves like a real processor (a Stripe-like JSON
// API with secret keys, idempotency keys, declines and a 3D Secure challenge page), so the service calls it
// over HTTP exactly as it would call a real one.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { SandboxConfig } from '../config.ts';
import { listen, reachableHost } from '../http/listen.ts';
import { BodyTooLargeError, readBody, sendJson } from '../http/node-bridge.ts';
import { AUTHENTICATION_FAILED, cardBrand, cardOutcome, luhnValid } from './cards.ts';
import { challengePage, notAwaitingAuthenticationPage, notFoundPage } from './pages.ts';
import { SandboxStore, requestFingerprint, type NewPayment, type Payment, type PaymentChanges, type PaymentStatus } from './store.ts';

export interface SandboxOptions {
  port: number;
  host?: string;
  /** Delay of every /v1 response, in ms; a request's `x-sandbox-latency-ms` header overrides it. */
  latencyMs?: number;
  /** Where browsers reach the sandbox; challenge URLs are built from it. Default: the listening URL. */
  publicUrl?: string;
}

export interface Sandbox {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024;
const MAX_LATENCY_MS = 30_000;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const API_KEY = /^sk_sandbox_[A-Za-z0-9]{8,64}$/;
const PAYMENT_PATH = /^\/v1\/payments\/([^/]+)(?:\/(capture|cancel))?$/;
const CHALLENGE_PATH = /^\/challenge\/([^/]+)(?:\/(complete|fail))?$/;

const AWAITING_AUTHENTICATION = new Set<PaymentStatus>(['requires_device_data', 'requires_authentication']);
const CANCELABLE = new Set<PaymentStatus>([...AWAITING_AUTHENTICATION, 'requires_capture']);

const createPaymentSchema = z.strictObject({
  amount: z.number().int('must be an integer').min(1, 'must be at least 1'),
  currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be 3 letters'),
  capture_method: z.enum(['automatic', 'manual'], 'must be "automatic" or "manual"'),
  card: z.strictObject({
    number: z.string().regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
    exp_month: z.number().int('must be an integer').min(1, 'must be 1 to 12').max(12, 'must be 1 to 12'),
    exp_year: z.number().int('must be an integer').min(1000, 'must be a 4-digit year').max(9999, 'must be a 4-digit year'),
    cvc: z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits'),
    holder_name: z.string().optional(),
  }),
  three_ds: z.enum(['required', 'automatic'], 'must be "required" or "automatic"'),
  return_url: z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }),
  reference: z.string().optional(),
});
type CreatePaymentInput = z.infer<typeof createPaymentSchema>;

const captureSchema = z.strictObject({
  amount_to_capture: z.number().int('must be an integer').min(1, 'must be at least 1').optional(),
});
type CaptureInput = z.infer<typeof captureSchema>;

const cancelSchema = z.strictObject({});

/** A refusal that becomes the error envelope `{ error: { code, message } }` with `status`. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface JsonReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A route's result: the payment and the HTTP status it is answered with (402 for a failed payment). */
interface PaymentResult {
  httpStatus: number;
  payment: Payment;
  replayed?: boolean;
}

interface Context {
  store: SandboxStore;
  latencyMs: number;
  publicUrl: string;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function authenticate(request: IncomingMessage): string {
  const key = /^Bearer (\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
  if (key === undefined || !API_KEY.test(key)) {
    throw new ApiError(401, 'invalid_api_key', 'Send Authorization: Bearer sk_sandbox_ followed by 8 to 64 letters or digits.');
  }
  return key;
}

function requestedLatency(request: IncomingMessage): number | undefined {
  const value = header(request, 'x-sandbox-latency-ms');
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > MAX_LATENCY_MS) {
    throw new ApiError(400, 'invalid_request', `x-sandbox-latency-ms must be an integer from 0 to ${MAX_LATENCY_MS}.`);
  }
  return Number(value);
}

function idempotencyKey(request: IncomingMessage): string | undefined {
  const value = header(request, 'idempotency-key');
  if (value !== undefined && (value.length === 0 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
    throw new ApiError(400, 'invalid_request', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
  }
  return value;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await readBody(request, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ApiError(413, 'payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    throw error;
  }
  // A POST without a body (as `curl -X POST` sends) means "no parameters".
  if (raw.length === 0) return {};
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
}

/** The input, or a 400 whose message starts with the dotted field at fault ("card.number must be …"). */
function parseInput<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body, {
    error: (issue) => {
      if (issue.code !== 'invalid_type') return undefined;
      if (issue.input === undefined) return 'is required';
      return issue.expected === 'object' ? 'must be a JSON object' : `must be a ${issue.expected}`;
    },
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') throw new ApiError(400, 'invalid_request', `${[...path, issue.keys[0]].join('.')} is not a known field.`);
  throw new ApiError(400, 'invalid_request', `${path.join('.') || 'The request body'} ${issue.message}.`);
}

function paymentObject(payment: Payment, publicUrl: string) {
  return {
    id: payment.id,
    object: 'payment',
    status: payment.status,
    amount: payment.amount,
    amount_capturable: payment.amountCapturable,
    amount_captured: payment.amountCaptured,
    currency: payment.currency,
    capture_method: payment.captureMethod,
    reference: payment.reference,
    card: { brand: payment.card.brand, last4: payment.card.last4, exp_month: payment.card.expMonth, exp_year: payment.card.expYear },
    next_action: AWAITING_AUTHENTICATION.has(payment.status) ? { type: 'redirect', redirect_url: `${publicUrl}/challenge/${payment.id}` } : null,
    error: payment.error,
    created: Math.floor(payment.createdMs / 1000),
    updated_ms: payment.updatedMs,
  };
}

/** The state once the card is authorised: charged at once (automatic) or held for a later capture (manual). */
function authorizedState(payment: Pick<Payment, 'amount' | 'captureMethod'>): PaymentChanges & Pick<Payment, 'status'> {
  return payment.captureMethod === 'automatic'
    ? { status: 'succeeded', amountCaptured: payment.amount, amountCapturable: 0 }
    : { status: 'requires_capture', amountCaptured: 0, amountCapturable: payment.amount };
}

const invalidState = (payment: Payment, operation: string) =>
  new ApiError(409, 'invalid_state', `This payment cannot be ${operation}: its status is ${payment.status}.`);

function findPayment(context: Context, apiKey: string, id: string): Payment {
  const payment = context.store.find(apiKey, id);
  if (!payment) throw new ApiError(404, 'resource_missing', `No payment ${id}.`);
  return payment;
}

/** How a caller finds a payment whose create answer it never received (it timed out): by its own reference. */
function findPaymentByReference(context: Context, apiKey: string, query: URLSearchParams): Payment {
  const reference = query.get('reference');
  if (!reference) throw new ApiError(400, 'invalid_request', 'reference is required (GET /v1/payments?reference=...).');
  const payment = context.store.findByReference(apiKey, reference);
  if (!payment) throw new ApiError(404, 'resource_missing', `No payment with reference ${reference}.`);
  return payment;
}

function createPayment(context: Context, apiKey: string, input: CreatePaymentInput): PaymentResult {
  const { card } = input;
  if (!luhnValid(card.number)) throw new ApiError(400, 'invalid_number', 'card.number is not a valid card number (the check digit does not match).');
  const fields: NewPayment = {
    apiKey,
    status: 'failed',
    amount: input.amount,
    amountCapturable: 0,
    amountCaptured: 0,
    currency: input.currency.toLowerCase(),
    captureMethod: input.capture_method,
    reference: input.reference ?? null,
    card: {
      brand: cardBrand(card.number),
      last4: card.number.slice(-4),
      expMonth: card.exp_month,
      expYear: card.exp_year,
      holderName: card.holder_name ?? null,
    },
    returnUrl: input.return_url,
    error: null,
  };
  const outcome = cardOutcome({ number: card.number, expMonth: card.exp_month, expYear: card.exp_year }, new Date());
  // A decline is still a payment: it is stored, so the caller can fetch it again after a lost answer.
  if (outcome.kind === 'failed') return { httpStatus: 402, payment: context.store.create({ ...fields, error: outcome.error }) };
  if (outcome.kind === 'challenge' || input.three_ds === 'required') {
    return { httpStatus: 200, payment: context.store.create({ ...fields, status: 'requires_device_data' }) };
  }
  return { httpStatus: 200, payment: context.store.create({ ...fields, ...authorizedState(fields) }) };
}

function capturePayment(context: Context, apiKey: string, id: string, input: CaptureInput): PaymentResult {
  const payment = findPayment(context, apiKey, id);
  if (payment.status !== 'requires_capture') throw invalidState(payment, 'captured');
  const amount = input.amount_to_capture ?? payment.amountCapturable;
  if (amount > payment.amountCapturable) {
    throw new ApiError(400, 'invalid_request', `amount_to_capture must be at most ${payment.amountCapturable} (the amount capturable).`);
  }
  // As with Stripe, capturing less than the hold releases the rest.
  return { httpStatus: 200, payment: context.store.update(payment, { status: 'succeeded', amountCaptured: amount, amountCapturable: 0 }) };
}

function cancelPayment(context: Context, apiKey: string, id: string): PaymentResult {
  const payment = findPayment(context, apiKey, id);
  if (payment.status === 'canceled') return { httpStatus: 200, payment };
  if (!CANCELABLE.has(payment.status)) throw invalidState(payment, 'canceled');
  return { httpStatus: 200, payment: context.store.update(payment, { status: 'canceled', amountCapturable: 0 }) };
}

/**
 * Runs a POST route once per Idempotency-Key: a repeat with the same request answers with the payment the
 * first one produced (as it is now), a repeat with another request is refused. Only requests that produced
 * a payment are recorded, so a refused request may be retried with its key. Nothing awaits between the
 * lookup and the record, so two concurrent requests with one key cannot both run.
 */
async function idempotentPost<T>(
  context: Context,
  request: IncomingMessage,
  apiKey: string,
  path: string,
  schema: z.ZodType<T>,
  execute: (input: T) => PaymentResult,
): Promise<PaymentResult> {
  const key = idempotencyKey(request);
  const body = await readJson(request);
  if (key === undefined) return execute(parseInput(schema, body));
  const fingerprint = requestFingerprint(path, body);
  const record = context.store.idempotencyRecord(apiKey, key);
  if (record) {
    if (record.fingerprint !== fingerprint) throw new ApiError(409, 'idempotency_mismatch', 'This Idempotency-Key was already used with a different request.');
    return { httpStatus: record.httpStatus, payment: record.payment, replayed: true };
  }
  const result = execute(parseInput(schema, body));
  context.store.saveIdempotencyRecord(apiKey, key, { fingerprint, payment: result.payment, httpStatus: result.httpStatus });
  return result;
}

async function routeApi(context: Context, request: IncomingMessage, url: URL): Promise<PaymentResult> {
  const apiKey = authenticate(request);
  const method = request.method ?? 'GET';
  const path = url.pathname;
  if (path === '/v1/payments' && method === 'GET') return { httpStatus: 200, payment: findPaymentByReference(context, apiKey, url.searchParams) };
  if (path === '/v1/payments' && method === 'POST') {
    return idempotentPost(context, request, apiKey, path, createPaymentSchema, (input) => createPayment(context, apiKey, input));
  }
  const [, id, operation] = PAYMENT_PATH.exec(path) ?? [];
  if (id !== undefined && operation === undefined && method === 'GET') return { httpStatus: 200, payment: findPayment(context, apiKey, id) };
  if (id !== undefined && operation === 'capture' && method === 'POST') {
    return idempotentPost(context, request, apiKey, path, captureSchema, (input) => capturePayment(context, apiKey, id, input));
  }
  if (id !== undefined && operation === 'cancel' && method === 'POST') {
    return idempotentPost(context, request, apiKey, path, cancelSchema, () => cancelPayment(context, apiKey, id));
  }
  throw new ApiError(404, 'not_found', `There is no route ${method} ${path}.`);
}

async function handleApi(context: Context, request: IncomingMessage, reply: ServerResponse, url: URL): Promise<void> {
  let latencyMs = context.latencyMs;
  let answer: JsonReply;
  try {
    latencyMs = requestedLatency(request) ?? latencyMs;
    const result = await routeApi(context, request, url);
    answer = {
      status: result.httpStatus,
      body: paymentObject(result.payment, context.publicUrl),
      ...(result.replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}),
    };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // After a 413 the rest of the body is unread, so the connection cannot carry another request.
    answer = {
      status: error.status,
      body: { error: { code: error.code, message: error.message } },
      ...(error.status === 413 ? { headers: { connection: 'close' } } : {}),
    };
  }
  // The work is done before the delay, as with a slow processor: a caller that times out may find the payment later.
  if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
  if (!reply.destroyed) sendJson(reply, answer.status, answer.body, answer.headers);
}

function sendHtml(reply: ServerResponse, status: number, html: string): void {
  reply.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
    // No scripts at all; form-action is left open because the forms redirect to the merchant's return URL.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'",
    'x-content-type-options': 'nosniff',
  });
  reply.end(html);
}

/** The customer's side of 3D Secure. No key: the browser only knows the payment id from the redirect URL. */
function handleChallenge(context: Context, reply: ServerResponse, id: string, outcome: string | undefined): void {
  const payment = context.store.findForChallenge(id);
  if (!payment) return sendHtml(reply, 404, notFoundPage());
  if (outcome === undefined) {
    // Loading the page is the device-data step: a real issuer fingerprints the browser here.
    if (payment.status === 'requires_device_data') context.store.update(payment, { status: 'requires_authentication' });
    if (payment.status === 'requires_authentication') return sendHtml(reply, 200, challengePage(payment));
    return sendHtml(reply, 409, notAwaitingAuthenticationPage(payment));
  }
  if (!AWAITING_AUTHENTICATION.has(payment.status)) return sendHtml(reply, 409, notAwaitingAuthenticationPage(payment));
  context.store.update(payment, outcome === 'complete' ? authorizedState(payment) : { status: 'failed', error: AUTHENTICATION_FAILED });
  reply.writeHead(303, { location: payment.returnUrl, 'content-length': 0 });
  reply.end();
}

async function handleRequest(context: Context, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://sandbox');
  const path = url.pathname;
  const [, challengeId, outcome] = CHALLENGE_PATH.exec(path) ?? [];
  // The challenge forms' bodies are never read: they carry nothing, and Node discards an unread body.
  if (challengeId !== undefined) {
    if (request.method !== (outcome === undefined ? 'GET' : 'POST')) return sendHtml(reply, 404, notFoundPage());
    return handleChallenge(context, reply, challengeId, outcome);
  }
  if (path.startsWith('/v1/')) return handleApi(context, request, reply, url);
  sendJson(reply, 404, { error: { code: 'not_found', message: `There is no route ${request.method} ${path}.` } });
}


export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer();
  const url = `http://${reachableHost(host)}:${await listen(server, options.port, host)}`;
  const context: Context = { store: new SandboxStore(), latencyMs: options.latencyMs ?? 0, publicUrl: (options.publicUrl ?? url).replace(/\/+$/, '') };
  server.on('request', (request: IncomingMessage, reply: ServerResponse) => {
    handleRequest(context, request, reply).catch((error: unknown) => {
      process.stderr.write(`sandbox: unhandled error for ${request.method} ${request.url}: ${(error as Error).stack}\n`);
      if (!reply.headersSent) sendJson(reply, 500, { error: { code: 'internal_error', message: 'The sandbox failed unexpectedly.' } });
      else reply.destroy();
    });
  });
  return {
    url,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}

/** Starts the sandbox with its environment settings (its own role, or inside the demo). */
export function startSandboxFromConfig(config: SandboxConfig): Promise<Sandbox> {
  return startSandbox({ port: config.SANDBOX_PORT, host: config.SANDBOX_HOST, latencyMs: config.SANDBOX_LATENCY_MS, publicUrl: config.SANDBOX_PUBLIC_URL });
}
