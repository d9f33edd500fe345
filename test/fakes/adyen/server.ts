// A local Adyen (Checkout API v71) for tests. Every request body is validated against Adyen's published OpenAPI
// document (openapi.ts): one that does not validate is answered 422 and recorded, and the tests fail on it.
// It behaves as Adyen's documented test cards and holder names do, and sends the notifications Adyen would,
// shaped by the webhooks document and signed with the official library's HmacValidator, when the test says so.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { hmacValidator } from '@adyen/api-library';
import { checkoutRequestErrors, notificationErrors } from './openapi.ts';

/** Adyen's test cards: these authorise; 4212345678901237 asks for 3DS2 by redirect. */
const AUTHORISED_CARDS = new Set(['4111111111111111', '5555555555554444']);
export const REDIRECT_CARD = '4212345678901237';
/**
 * A Luhn-valid number this fake reads as one Adyen cannot take (our own validation refuses a wrong check digit before
 * any call): answered as Adyen answers an invalid card number, HTTP 422 with errorCode 101, before any payment exists.
 */
export const INVALID_NUMBER_CARD = '4999999999999996';

/** Adyen's test holder names that force a refusal, with its refusalReasonCode and refusalReason. */
export const REFUSING_HOLDER_NAMES: Readonly<Record<string, { code: string; reason: string }>> = {
  REFUSED: { code: '2', reason: 'Refused' },
  NOT_ENOUGH_BALANCE: { code: '12', reason: 'Not enough balance' },
  BLOCK_CARD: { code: '5', reason: 'Blocked Card' },
  CARD_EXPIRED: { code: '6', reason: 'Expired Card' },
  CVC_DECLINED: { code: '24', reason: 'CVC Declined' },
  ISSUER_UNAVAILABLE: { code: '9', reason: 'Issuer Unavailable' },
  FRAUD: { code: '20', reason: 'FRAUD' },
};

interface FakePayment {
  pspReference: string;
  reference: string;
  merchantAccount: string;
  amount: { value: number; currency: string };
  metadata: Record<string, string>;
  returnUrl: string;
}

export interface NotificationItemInput {
  eventCode: string;
  success: boolean;
  pspReference: string;
  originalReference?: string;
  merchantReference: string;
  amount: { value: number; currency: string };
  reason?: string;
  additionalData?: Record<string, unknown>;
  /** The merchant account the item is for; the fake's own (TestMerchant) by default. */
  merchantAccountCode?: string;
  /** Signs the item with this key instead of the one notifyTo gave (a forged item). */
  hmacKey?: string;
}

export interface AdyenFake {
  url: string;
  /** Requests that did not validate against Adyen's document (each: its operation and errors). */
  invalid: { operation: string; errors: string[] }[];
  /** Every validated request, in order: its path, Idempotency-Key and body. */
  requests: { path: string; idempotencyKey: string | undefined; body: Record<string, unknown> }[];
  payments: Map<string, FakePayment>;
  /** Delays the answer of the next request by `ms` (Adyen acts at once: a timed-out call still did its work). */
  stallNext(ms: number): void;
  /**
   * How the issuer's or bank's page sends the shopper back to the returnUrl: a redirect (GET, the redirectResult in
   * the query; the default) or a self-submitting form (POST, the redirectResult in the form).
   */
  returnWith(method: 'GET' | 'POST'): void;
  /** Where notifications go, and the HMAC key (hex) they are signed with. */
  notifyTo(url: string, hmacKey: string): void;
  /** Notifications Adyen would send, queued by the operations; `deliver` sends them. */
  queued: NotificationItemInput[];
  /** Sends the queued notifications (or `items`), one per request; the answers. */
  deliver(items?: NotificationItemInput[]): Promise<{ status: number; body: string }[]>;
  /**
   * Adyen's notification of a step of the dispute of the payment `paymentPspReference`: every step of it under the
   * dispute's own pspReference, the payment's as originalReference; `disputeStatus` as Adyen adds it (absent for
   * payments processed in Brazil).
   */
  disputeNotification(paymentPspReference: string, eventCode: string, disputeStatus?: string): NotificationItemInput;
  /** Sends `items` in one request, as Adyen batches them, from its test environment unless `live` is "true"; the answer. */
  deliverBatch(items: NotificationItemInput[], live?: 'true' | 'false'): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

interface SplitItem {
  type: string;
  account?: string;
  amount?: { value: number; currency?: string };
  reference?: string;
}

/** The split types the Split schema says need an amount on the Balance Platform. */
const SPLIT_TYPES_WITH_AMOUNT = new Set(['BalanceAccount', 'Commission', 'Surcharge', 'Default', 'VAT']);

/**
 * The rules of the Checkout v71 Split schema's descriptions the JSON Schema cannot hold (Balance Platform): a
 * BalanceAccount item names its account (a balance account id, BA…) and a reference, unique within the payment; the
 * amount types carry one, in the payment's currency if they say one; and the amounts add up to the payment's
 * (docs.adyen.com/platforms/online-payments/split-transactions).
 */
function splitRuleErrors(splits: SplitItem[], amount: { value: number; currency: string }): string[] {
  const errors: string[] = [];
  const references = new Set<string>();
  splits.forEach((split, index) => {
    if (split.type === 'BalanceAccount' && !/^BA[A-Z0-9]+$/.test(split.account ?? '')) errors.push(`/splits/${index} BalanceAccount needs a balance account`);
    if (split.type === 'BalanceAccount' && split.reference === undefined) errors.push(`/splits/${index} BalanceAccount needs a reference`);
    if (SPLIT_TYPES_WITH_AMOUNT.has(split.type) && split.amount === undefined) errors.push(`/splits/${index} ${split.type} needs an amount`);
    if (split.amount?.currency !== undefined && split.amount.currency !== amount.currency) errors.push(`/splits/${index} is not in the payment's currency`);
    if (split.reference !== undefined && references.has(split.reference)) errors.push(`/splits/${index} reference is not unique`);
    if (split.reference !== undefined) references.add(split.reference);
  });
  const total = splits.reduce((sum, split) => sum + (split.amount?.value ?? 0), 0);
  if (total !== amount.value) errors.push(`the split amounts add up to ${total}, not the payment's ${amount.value}`);
  return errors;
}

/** When the defense period of the fake's disputes ends, in Adyen's format (ISO 8601 with the offset). */
export const DEFENSE_PERIOD_ENDS_AT = '2030-01-15T10:00:00+01:00';

const pspReference = () => randomBytes(8).toString('hex').toUpperCase();

export async function startAdyenFake(): Promise<AdyenFake> {
  const payments = new Map<string, FakePayment>();
  const answered = new Map<string, { status: number; body: unknown }>();
  /** The pspReference of each disputed payment's dispute, by the payment's. */
  const disputes = new Map<string, string>();
  let target: { url: string; hmacKey: string } | null = null;
  let stallMs = 0;
  let returnMethod: 'GET' | 'POST' = 'GET';

  const fake: AdyenFake = {
    url: '',
    invalid: [],
    requests: [],
    payments,
    queued: [],
    stallNext: (ms) => {
      stallMs = ms;
    },
    returnWith: (method) => {
      returnMethod = method;
    },
    notifyTo: (url, hmacKey) => {
      target = { url, hmacKey };
    },
    deliver: async (items) => {
      const sending = items ?? fake.queued.splice(0);
      const answers = [];
      for (const item of sending) answers.push(await send([item]));
      return answers;
    },
    deliverBatch: (items, live) => send(items, live),
    disputeNotification: (paymentPspReference, eventCode, disputeStatus) => {
      const payment = payments.get(paymentPspReference);
      if (payment === undefined) throw new Error(`the Adyen fake has no payment ${paymentPspReference}`);
      let disputePspReference = disputes.get(paymentPspReference);
      if (disputePspReference === undefined) disputes.set(paymentPspReference, (disputePspReference = pspReference()));
      return {
        eventCode,
        success: true,
        pspReference: disputePspReference,
        originalReference: paymentPspReference,
        merchantReference: payment.reference,
        amount: payment.amount,
        reason: 'Other Fraud-Card Absent Environment',
        additionalData: {
          chargebackReasonCode: '10.4',
          chargebackSchemeCode: 'visa',
          defensePeriodEndsAt: DEFENSE_PERIOD_ENDS_AT,
          ...(disputeStatus === undefined ? {} : { disputeStatus }),
        },
      };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  /** One notification of `inputs`' items, each signed on its own and checked against its eventCode's request in the webhooks document. */
  async function send(inputs: NotificationItemInput[], live: 'true' | 'false' = 'false') {
    if (target === null) throw new Error('the Adyen fake has nowhere to send notifications (notifyTo)');
    const { url, hmacKey } = target;
    const notificationItems = inputs.map((input) => {
      const item = {
        pspReference: input.pspReference,
        ...(input.originalReference ? { originalReference: input.originalReference } : {}),
        merchantAccountCode: input.merchantAccountCode ?? 'TestMerchant',
        merchantReference: input.merchantReference,
        amount: input.amount,
        eventCode: input.eventCode,
        eventDate: new Date().toISOString(),
        success: String(input.success),
        ...(input.reason ? { reason: input.reason } : {}),
        additionalData: { ...input.additionalData },
      };
      const hmacSignature = new hmacValidator().calculateHmac(item as never, input.hmacKey ?? hmacKey);
      const wrapped = { NotificationRequestItem: { ...item, additionalData: { ...item.additionalData, hmacSignature } } };
      const errors = notificationErrors(input.eventCode, { live, notificationItems: [wrapped] });
      if (errors.length > 0) throw new Error(`the fake's ${input.eventCode} notification does not follow Adyen's webhooks document: ${errors.join('; ')}`);
      return wrapped;
    });
    const body = JSON.stringify({ live, notificationItems });
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: response.status, body: await response.text() };
  }

  function authorise(body: Record<string, unknown>): { status: number; body: unknown } {
    const splitErrors = body.splits === undefined ? [] : splitRuleErrors(body.splits as SplitItem[], body.amount as FakePayment['amount']);
    if (splitErrors.length > 0) {
      fake.invalid.push({ operation: 'POST /payments splits', errors: splitErrors });
      return { status: 422, body: { status: 422, errorCode: '000', message: `Invalid split data: ${splitErrors[0]}`, errorType: 'validation' } };
    }
    const method = body.paymentMethod as Record<string, string>;
    // Adyen's example of a validation error (docs.adyen.com/development-resources/error-codes).
    if (method.number === INVALID_NUMBER_CARD)
      return { status: 422, body: { status: 422, errorCode: '101', message: 'Invalid card number', errorType: 'validation', pspReference: pspReference() } };
    const payment: FakePayment = {
      pspReference: pspReference(),
      reference: body.reference as string,
      merchantAccount: body.merchantAccount as string,
      amount: body.amount as FakePayment['amount'],
      metadata: (body.metadata ?? {}) as Record<string, string>,
      returnUrl: body.returnUrl as string,
    };
    const common = { pspReference: payment.pspReference, merchantReference: payment.reference };
    const refusal = method.holderName === undefined ? undefined : REFUSING_HOLDER_NAMES[method.holderName];
    if (refusal) {
      // As Adyen's with its additional data on (Customer Area, Developers > Additional data): the card's summary and expiry among it.
      const additionalData = {
        refusalReasonRaw: refusal.reason,
        cardSummary: (method.number ?? '').slice(-4),
        expiryDate: `${method.expiryMonth}/${method.expiryYear}`,
      };
      return { status: 200, body: { ...common, resultCode: 'Refused', refusalReason: refusal.reason, refusalReasonCode: refusal.code, additionalData } };
    }
    payments.set(payment.pspReference, payment);
    if (method.type === 'ideal' || method.number === REDIRECT_CARD) {
      const url = `${fake.url}/hpp/authenticate/${payment.pspReference}`;
      return {
        status: 200,
        body: { ...common, resultCode: 'RedirectShopper', action: { type: 'redirect', method: 'GET', url, paymentMethodType: method.type } },
      };
    }
    if (!AUTHORISED_CARDS.has(method.number ?? ''))
      return { status: 200, body: { ...common, resultCode: 'Refused', refusalReason: 'Refused', refusalReasonCode: '2' } };
    queueAuthorisation(payment);
    return { status: 200, body: { ...common, resultCode: 'Authorised', amount: payment.amount } };
  }

  function queueAuthorisation(payment: FakePayment) {
    fake.queued.push({
      eventCode: 'AUTHORISATION',
      success: true,
      pspReference: payment.pspReference,
      merchantReference: payment.reference,
      amount: payment.amount,
      additionalData: { metadata: payment.metadata },
    });
  }

  function details(body: Record<string, unknown>): { status: number; body: unknown } {
    const redirectResult = (body.details as { redirectResult?: string }).redirectResult ?? '';
    const payment = payments.get(Buffer.from(redirectResult, 'base64url').toString('utf8'));
    if (payment === undefined) return { status: 422, body: { status: 422, errorCode: '101', message: 'Invalid redirectResult', errorType: 'validation' } };
    queueAuthorisation(payment);
    return {
      status: 200,
      body: { pspReference: payment.pspReference, merchantReference: payment.reference, resultCode: 'Authorised', amount: payment.amount },
    };
  }

  const MODIFICATION_EVENTS = { captures: 'CAPTURE', cancels: 'CANCELLATION', refunds: 'REFUND' } as const;

  function modify(paymentPsp: string, operation: keyof typeof MODIFICATION_EVENTS, body: Record<string, unknown>): { status: number; body: unknown } {
    const payment = payments.get(paymentPsp);
    if (payment === undefined)
      return { status: 422, body: { status: 422, errorCode: '167', message: 'Original pspReference required for this operation', errorType: 'validation' } };
    const amount = (body.amount as FakePayment['amount'] | undefined) ?? payment.amount;
    // A capture's or refund's splits follow the payment's rules, adding up to its own amount.
    const splitErrors = body.splits === undefined ? [] : splitRuleErrors(body.splits as SplitItem[], amount);
    if (splitErrors.length > 0) {
      fake.invalid.push({ operation: `POST /payments/{paymentPspReference}/${operation} splits`, errors: splitErrors });
      return { status: 422, body: { status: 422, errorCode: '000', message: `Invalid split data: ${splitErrors[0]}`, errorType: 'validation' } };
    }
    const modification = { pspReference: pspReference(), reference: body.reference as string };
    fake.queued.push({
      eventCode: MODIFICATION_EVENTS[operation],
      success: true,
      pspReference: modification.pspReference,
      originalReference: payment.pspReference,
      merchantReference: modification.reference,
      amount,
    });
    return {
      status: 201,
      body: { merchantAccount: payment.merchantAccount, paymentPspReference: payment.pspReference, ...modification, status: 'received', amount },
    };
  }

  /** The Checkout operation a path is, as the document names it, and what the fake does for it. */
  function route(path: string): { template: string; handle: (body: Record<string, unknown>) => { status: number; body: unknown } } | null {
    if (path === '/v71/payments') return { template: '/payments', handle: authorise };
    if (path === '/v71/payments/details') return { template: '/payments/details', handle: details };
    const modification = /^\/v71\/payments\/([^/]+)\/(captures|cancels|refunds)$/.exec(path);
    if (modification === null) return null;
    const [, psp = '', operation] = modification;
    const kind = operation as keyof typeof MODIFICATION_EVENTS;
    return { template: `/payments/{paymentPspReference}/${kind}`, handle: (body) => modify(decodeURIComponent(psp), kind, body) };
  }

  /** The issuer's page: the shopper authenticates and is sent back to the returnUrl with a redirectResult. */
  function authenticatePage(psp: string, reply: ServerResponse) {
    const payment = payments.get(psp);
    if (payment === undefined) return json(reply, 404, { status: 404, errorCode: '000', message: 'Not found', errorType: 'validation' });
    const redirectResult = Buffer.from(psp).toString('base64url');
    if (returnMethod === 'POST') {
      const form = `<form method="post" action="${escapeAttribute(payment.returnUrl)}"><input type="hidden" name="redirectResult" value="${redirectResult}"></form>`;
      reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>${form}<script>document.forms[0].submit()</script>`);
      return;
    }
    const back = new URL(payment.returnUrl);
    back.searchParams.set('redirectResult', redirectResult);
    reply.writeHead(302, { location: back.href }).end();
  }

  async function handle(request: IncomingMessage, reply: ServerResponse) {
    const path = new URL(request.url ?? '/', 'http://fake').pathname;
    const page = /^\/hpp\/authenticate\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && page) return authenticatePage(page[1] ?? '', reply);
    const operation = request.method === 'POST' ? route(path) : null;
    if (operation === null) return json(reply, 404, { status: 404, errorCode: '000', message: `No ${request.method} ${path}`, errorType: 'validation' });
    if (!request.headers['x-api-key'])
      return json(reply, 401, { status: 401, errorCode: '000', message: 'HTTP Status Response - Unauthorized', errorType: 'security' });
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    const errors = checkoutRequestErrors(operation.template, body);
    if (errors.length > 0) {
      fake.invalid.push({ operation: `POST ${operation.template}`, errors });
      return json(reply, 422, { status: 422, errorCode: '702', message: `Request does not follow Checkout API v71: ${errors[0]}`, errorType: 'validation' });
    }
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
    fake.requests.push({ path, idempotencyKey, body });
    // Adyen's idempotency: the same key answers what it answered the first time, and does nothing again.
    const key = idempotencyKey === undefined ? undefined : `${path} ${idempotencyKey}`;
    const answer = (key && answered.get(key)) || operation.handle(body);
    if (key) answered.set(key, answer);
    const stall = stallMs;
    stallMs = 0;
    if (stall > 0) await new Promise((resolve) => setTimeout(resolve, stall));
    if (!reply.destroyed) json(reply, answer.status, answer.body);
  }

  const server = createServer((request, reply) => {
    handle(request, reply).catch((error: unknown) => json(reply, 500, { status: 500, errorCode: '901', message: String(error), errorType: 'internal' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

function json(reply: ServerResponse, status: number, body: unknown) {
  reply.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const escapeAttribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
