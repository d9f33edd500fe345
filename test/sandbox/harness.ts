// The sandbox processors over real HTTP, as the service's connector and a customer's browser use them: each
// test file starts its own server with useSandbox(). Every answer is checked for the secrets sent so far
// (card numbers, CVCs, IBANs, wallet payment tokens, callback signing secrets), so no test can pass while the
// sandbox echoes one.
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox/src/server.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.ts';

/**
 * A payment object, a refund, a dispute, a saved card (payment method), a payout, a session, a wallet answer
 * or an error envelope: one loose shape for all of them.
 */
export interface Body {
  id: string;
  object: string;
  status: string;
  amount: number;
  amount_capturable: number;
  amount_captured: number;
  canceled_after_capture: boolean;
  currency: string;
  capture_method: string;
  reference: string | null;
  payment_method_type: string;
  card: { brand: string; last4: string; exp_month: number; exp_year: number } | null;
  bank_debit: { last4: string } | null;
  payment_method_token: string | null;
  next_action: {
    type: string;
    redirect_url: string;
    instructions?: { reference: string; amount: number; currency: string; iban?: string; address?: string };
  } | null;
  error: { code: string; message: string; retryable?: boolean } | null;
  created: number;
  updated_ms: number;
  // A refund (its other fields are a payment's)
  payment: string;
  reason: string | null;
  // A dispute (its other fields are a refund's)
  evidence_due_by: number;
  evidence: Record<string, string> | null;
  // A payout (its other fields are a refund's)
  destination: { type: string; last4: string };
  // A session
  wallet: string;
  session_token: string;
  expires_at: number;
  // The wallet sheet's answer
  payment_token: string;
  // A processor's control state (/_control)
  processor: string;
  declineRate: number;
  outage: boolean;
  seed: number;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Body;
  ms: number;
}

export interface CallOptions {
  /** The secret key; undefined for a new sandbox key, null for none. */
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  base?: string;
  signal?: AbortSignal;
}

export const RETURN_URL = 'https://shop.example/return?attempt=att_1&x=<y>';
export const FUTURE_YEAR = new Date().getUTCFullYear() + 3;
export const HOUR_MS = 60 * 60 * 1000;

export const newKey = () => `sk_sandbox_${randomBytes(8).toString('hex')}`;
export const newFauxpayKey = () => `sk_fauxpay_${randomBytes(8).toString('hex')}`;

// Written from the contract, not derived from the sandbox's tables, so a wrong row in a table fails a test.
const DECLINE = (code: string, message: string, retryable = false) => ({ http: 402, status: 'failed', error: { code, message, retryable } });
export interface ExpectedCard {
  brand: string;
  http: number;
  status: string;
  error: Body['error'];
}
export const EXPECTED_CARDS: Record<string, ExpectedCard> = {
  '4242424242424242': { brand: 'visa', http: 200, status: 'succeeded', error: null },
  '5555555555554444': { brand: 'mastercard', http: 200, status: 'succeeded', error: null },
  '378282246310005': { brand: 'amex', http: 200, status: 'succeeded', error: null },
  '4000002500003155': { brand: 'visa', http: 200, status: 'requires_device_data', error: null },
  '4000000000000002': { brand: 'visa', ...DECLINE('card_declined', 'Your card was declined.') },
  '4000000000009995': { brand: 'visa', ...DECLINE('insufficient_funds', 'Your card has insufficient funds.') },
  // The partial funds test card (partial-and-void.test.ts): declined unless the payment allows a partial authorization.
  '4000000000001976': { brand: 'visa', ...DECLINE('insufficient_funds', 'Your card has insufficient funds.') },
  '4000000000000069': { brand: 'visa', ...DECLINE('expired_card', 'Your card has expired.') },
  '4000000000000119': { brand: 'visa', ...DECLINE('processing_error', 'An error occurred while processing your card. Try again.', true) },
  '4000000000000127': { brand: 'visa', ...DECLINE('incorrect_cvc', "Your card's security code is incorrect.") },
  // The refund test cards (refunds.test.ts): the payment itself is approved.
  '4000000000007726': { brand: 'visa', http: 200, status: 'succeeded', error: null },
  '4000000000005126': { brand: 'visa', http: 200, status: 'succeeded', error: null },
  '4000000000006975': { brand: 'visa', http: 200, status: 'succeeded', error: null },
  // The dispute test card (disputes.test.ts): the payment itself is approved.
  '4000000000000259': { brand: 'visa', http: 200, status: 'succeeded', error: null },
  // The expiring payout test card (payouts.test.ts): a payment with it is approved.
  '4000000000000077': { brand: 'visa', http: 200, status: 'succeeded', error: null },
};

/** An Amex CVC has 4 digits, the others 3. */
export const cvcFor = (number: string) => (/^3[47]/.test(number) ? '1234' : '123');

export function paymentInput(overrides: Record<string, unknown> = {}, card: Record<string, unknown> = {}) {
  return {
    amount: 1234,
    currency: 'USD',
    capture_method: 'automatic',
    three_ds: 'automatic',
    return_url: RETURN_URL,
    reference: 'att_test',
    ...overrides,
    card: { number: '4242424242424242', exp_month: 12, exp_year: FUTURE_YEAR, cvc: '123', ...card },
  };
}

/** A create body for any payment method group: the card fields replaced by `method`'s. */
export function methodInput(method: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  const { card: _card, three_ds: _threeDs, ...common } = paymentInput();
  return { ...common, ...method, ...overrides };
}

export const TEST_IBAN = 'DE89370400440532013000';

/** What saves a payment's card for later payments (a payment_method_token). */
export const SAVE = { setup_future_usage: 'off_session' };

/** The detail object of each group that needs no customer step before the create (the wallets do, see wallets.test.ts). */
export const METHOD_DETAILS = {
  bank_debit: { payment_method_type: 'bank_debit', bank_debit: { account_holder_name: 'Erika Mustermann', iban: TEST_IBAN } },
  bank_redirect: { payment_method_type: 'bank_redirect', bank_redirect: { bank: 'sandbox_bank' } },
  bank_transfer: { payment_method_type: 'bank_transfer', bank_transfer: {} },
  crypto: { payment_method_type: 'crypto', crypto: { network: 'sandbox_chain' } },
};

// ---- The leak guard --------------------------------------------------------------------------------------

/** Keys that would mean the sandbox returns what it must keep (or never keep). */
const SECRET_KEYS = new Set(['number', 'cvc', 'card_cvc', 'secret']);
/** Keys that echo the caller's own words or show a card's last digits, by design. */
const ECHO_KEYS = new Set(['reference', 'last4']);
/**
 * The secrets a request sends: card numbers, CVCs, IBANs (a payment's, or a payout's destination), wallet
 * payment tokens and callback signing secrets.
 */
function secretsOf(body: unknown): string[] {
  if (body === null || typeof body !== 'object') return [];
  const { card, card_cvc, bank_debit, wallet, pay_later, secret, destination } = body as Record<string, Record<string, unknown> | undefined>;
  const payoutCard = destination?.card as Record<string, unknown> | undefined;
  const candidates = [
    card?.number,
    card?.cvc,
    card_cvc,
    bank_debit?.iban,
    wallet?.payment_token,
    pay_later?.payment_token,
    secret,
    payoutCard?.number,
    destination?.iban,
  ];
  // Only values that could be real secrets: a 2-digit "CVC" sent to test a refusal would match everywhere.
  return candidates.filter((value): value is string => typeof value === 'string' && (/^\d{3,4}$/.test(value) || value.length >= 10));
}

/**
 * The secrets among `secrets` that `answer` shows, and the secret-bearing keys it has. A long secret (a card
 * number, an IBAN, a token) counts anywhere in the text. A CVC counts only as a whole value (a JSON string, an
 * HTML element's text or attribute): 3 or 4 digits turn up inside ids, timestamps and amounts by chance.
 */
export function leaks(answer: Pick<Answer, 'text' | 'headers'>, secrets: Iterable<string>): string[] {
  const all = [...secrets];
  const long = all.filter((secret) => secret.length > 4);
  const short = all.filter((secret) => secret.length <= 4);
  const found = long.filter((secret) => answer.text.includes(secret));
  if (!answer.headers.get('content-type')?.startsWith('application/json')) {
    return [...found, ...short.filter((secret) => answer.text.includes(`>${secret}<`) || answer.text.includes(`"${secret}"`))];
  }
  const walk = (value: unknown, key: string | undefined) => {
    if (typeof value === 'string' && !ECHO_KEYS.has(key ?? '')) found.push(...short.filter((secret) => value.trim() === secret));
    if (value === null || typeof value !== 'object') return;
    for (const [inner, child] of Object.entries(value)) {
      if (SECRET_KEYS.has(inner)) found.push(`key ${inner}`);
      walk(child, inner);
    }
  };
  walk(JSON.parse(answer.text), undefined);
  return found;
}

// ---- The client --------------------------------------------------------------------------------------------

/** Starts a sandbox for the test file and answers a client of it. */
export function useSandbox(options: Omit<SandboxOptions, 'port'> = {}) {
  let sandbox: Sandbox | undefined;
  const secrets = new Set<string>();

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, ...options });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  const url = () => {
    if (sandbox === undefined) throw new Error('the sandbox starts in beforeAll');
    return sandbox.url;
  };

  async function call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== null) headers.authorization = `Bearer ${options.key ?? newKey()}`;
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined) headers['content-type'] = 'application/json';
    for (const secret of secretsOf(options.body)) secrets.add(secret);
    const started = performance.now();
    const response = await fetch(`${options.base ?? url()}${path}`, { method, headers, body, redirect: 'manual', signal: options.signal });
    const text = await response.text();
    const ms = performance.now() - started;
    const isJson = response.headers.get('content-type')?.startsWith('application/json') ?? false;
    const answer = { status: response.status, headers: response.headers, text, body: isJson ? (JSON.parse(text) as Body) : ({} as Body), ms };
    // The wallet's sheet gives the payment token to the SDK (again, for a repeated answer); no other answer may show it.
    const given = path.startsWith('/sessions/') ? answer.body.payment_token : undefined;
    expect(
      leaks(
        answer,
        [...secrets].filter((secret) => secret !== given),
      ),
      `${method} ${path} answered a secret`,
    ).toEqual([]);
    if (typeof given === 'string') secrets.add(given);
    return answer;
  }

  const create = (key: string, overrides: Record<string, unknown> = {}, card: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    call('POST', '/v1/payments', { key, body: paymentInput(overrides, card), headers });

  /** A payment of any group (see methodInput), on the sandbox personality unless `prefix` says otherwise. */
  const createWith = (
    key: string,
    method: Record<string, unknown>,
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    prefix = '/v1',
  ) => call('POST', `${prefix}/payments`, { key, body: methodInput(method, overrides), headers });

  const get = (key: string, id: string, prefix = '/v1') => call('GET', `${prefix}/payments/${id}`, { key });
  const capture = (key: string, id: string, body: unknown = {}, headers: Record<string, string> = {}) =>
    call('POST', `/v1/payments/${id}/capture`, { key, body, headers });
  const cancel = (key: string, id: string) => call('POST', `/v1/payments/${id}/cancel`, { key, body: {} });

  /** The customer's browser on the sandbox's pages (no key). */
  const browser = (method: 'GET' | 'POST', path: string) => call(method, path, { key: null });

  /** A payment of `key` waiting in requires_device_data (the 3DS test card). */
  async function challenged(key: string, overrides: Record<string, unknown> = {}, card: Record<string, unknown> = {}): Promise<Body> {
    const created = await create(key, overrides, { number: '4000002500003155', ...card });
    expect(created.body.status).toBe('requires_device_data');
    return created.body;
  }

  /** Saves `number` for `key` with an accepted payment (setup_future_usage) and answers its payment_method_token. */
  async function saved(key: string, number = '4242424242424242', card: Record<string, unknown> = {}, prefix = '/v1'): Promise<string> {
    const created = await call('POST', `${prefix}/payments`, { key, body: paymentInput(SAVE, { number, cvc: cvcFor(number), ...card }) });
    expect(created.body.payment_method_token, created.text).toMatch(/^pm_[A-Za-z0-9]{24}$/);
    return created.body.payment_method_token!;
  }

  /** A payment with the saved card `token`, its customer there: no `card`, the token and the CVC the customer typed again. */
  const payWithToken = (key: string, token: string, overrides: Record<string, unknown> = {}, prefix = '/v1') =>
    createWith(key, { payment_method_token: token, card_cvc: '123', three_ds: 'automatic' }, overrides, {}, prefix);

  /** A merchant-initiated payment with the saved card `token` (off session): no CVC, no customer to challenge. */
  const chargeOffSession = (key: string, token: string, overrides: Record<string, unknown> = {}, headers: Record<string, string> = {}, prefix = '/v1') =>
    createWith(key, { payment_method_token: token, off_session: true, three_ds: 'automatic' }, overrides, headers, prefix);

  /** A succeeded card payment of `key` (of `number`, by default a card with no test behaviour after success). */
  async function paid(key: string, number = '4242424242424242', overrides: Record<string, unknown> = {}): Promise<Body> {
    const created = await create(key, overrides, { number, cvc: cvcFor(number) });
    expect(created.body.status).toBe('succeeded');
    return created.body;
  }

  return { url, call, create, createWith, get, capture, cancel, browser, challenged, paid, saved, payWithToken, chargeOffSession };
}

/** Every field of the sandbox's payment object, sorted. */
export const PAYMENT_KEYS = [
  'id',
  'object',
  'status',
  'amount',
  'amount_capturable',
  'amount_captured',
  'canceled_after_capture',
  'currency',
  'capture_method',
  'reference',
  'payment_method_type',
  'card',
  'bank_debit',
  'payment_method_token',
  'next_action',
  'error',
  'created',
  'updated_ms',
].sort();

// ---- Checks shared by the test files ------------------------------------------------------------------------

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `answer` is the error envelope with `status`, `code` and `message` (exactly, or matching). */
export function expectRefused(answer: Answer, status: number, code: string, message: string | RegExp): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.body.error?.code).toBe(code);
  if (typeof message === 'string') expect(answer.body.error?.message).toBe(message);
  else expect(answer.body.error?.message).toMatch(message);
}

/** Freezes the sandbox's clock (Date only: the HTTP timers keep running) for the test's callback; the caller's afterEach unfreezes it. */
export async function atFrozenTime(run: (at: (offsetMs: number) => void) => Promise<void>): Promise<void> {
  const start = Date.now();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(start);
  await run((offsetMs) => vi.setSystemTime(start + offsetMs));
}

/** A callback as `GET /v1/webhook_deliveries` shows it. */
export interface Delivery {
  event_id: string;
  type: string;
  object_id: string;
  payment_id: string | null;
  url: string;
  attempts: number;
  last_status: number | null;
  delivered: boolean;
}

/** A callback's event, as the sandbox personality POSTs it. */
export interface Callback {
  id: string;
  type: string;
  created: number;
  data: { object: Body };
}

/**
 * Keys of the sandbox personality with their callback endpoint on a local receiver (closed after each test),
 * and the checks of what the receivers get. `secret` signs the callbacks; `quietMs` is long enough for a
 * callback that would be sent to have arrived.
 */
export function useCallbackReceivers(call: ReturnType<typeof useSandbox>['call'], secret: string, quietMs: number) {
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  });

  /** A new key with its callback endpoint registered on a new receiver (at the sandbox at `base`, by default the file's). */
  async function registered(base?: string): Promise<{ key: string; receiver: Receiver }> {
    const key = newKey();
    const receiver = await startReceiver();
    receivers.push(receiver);
    expect((await call('POST', '/v1/webhook_endpoints', { key, base, body: { url: receiver.url, secret } })).status).toBe(200);
    return { key, receiver };
  }

  /** The event of a callback, after checking its signature with an HMAC computed here, apart from the sandbox's code. */
  function signedEvent(request: ReceivedRequest): Callback {
    expect(request.headers['content-type']).toBe('application/json');
    const [, timestamp, signature] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(request.headers['sandbox-signature'])) ?? [];
    expect(signature, String(request.headers['sandbox-signature'])).toBeDefined();
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(5);
    expect(signature).toBe(createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(request.body).digest('hex'));
    return JSON.parse(request.body.toString('utf8')) as Callback;
  }

  /**
   * Waits for the only callback `receiver` gets, checks it (its type, its signature) and that GET answers
   * exactly the object it carries (`GET /v1/refunds/{id}` for a refund, `GET /v1/payment_methods/{token}` for a
   * saved card, ...).
   */
  async function onlyCallback(key: string, receiver: Receiver, type: string, base?: string): Promise<Callback> {
    const [request] = await receiver.waitForRequests(1, 3000);
    const event = signedEvent(request!);
    expect(event.type).toBe(type);
    const { object, id } = event.data.object;
    expect(type.startsWith(`${object}.`)).toBe(true);
    const fetched = await call('GET', `/v1/${object}s/${id}`, { key, base });
    expect(event.data.object).toEqual(fetched.body);
    expect(request!.body.toString('utf8').endsWith(`,"data":{"object":${fetched.text}}}`)).toBe(true);
    await sleep(quietMs);
    expect(receiver.received).toHaveLength(1);
    return event;
  }

  /** What the sandbox (at `base`, by default the file's) sent to `key`'s endpoint, newest first. */
  async function deliveries(key: string, base?: string): Promise<Delivery[]> {
    const answer = await call('GET', '/v1/webhook_deliveries', { key, base });
    expect(answer.status, answer.text).toBe(200);
    return (JSON.parse(answer.text) as { data: Delivery[] }).data;
  }

  return { registered, signedEvent, onlyCallback, deliveries };
}
