// The customer's side of the sandbox, reached without a key: the pages a browser is sent to by a payment's
// next_action (3D Secure challenge, bank authorization, transfer and crypto instructions) and the wallet's
// sheet, where the customer answers a session. They are shared by every personality: ids and tokens are
// random, so each belongs to one personality's store only.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http.ts';
import { BANK_AUTHORIZATION_FAILED } from './banks.ts';
import { AUTHENTICATION_FAILED } from './cards.ts';
import { bankPage, challengePage, instructionsPage, notAwaitingPage, notFoundPage } from './pages.ts';
import { answerSession, authorizedState } from './payments.ts';
import type { PaymentMethodType } from './processors.ts';
import type { Personality } from './personality.ts';
import { ApiError, answerOrRefusal } from './requests.ts';
import type { Instructions, Payment, PaymentChanges, PaymentStatus } from './resources.ts';
import type { SandboxStore } from './store.ts';
import { isWalletDecision } from './wallets.ts';

type NextAction =
  | { type: 'redirect'; redirect_url: string }
  | {
      type: 'display_instructions';
      redirect_url: string;
      instructions: { reference: string; amount: number; currency: string } & ({ iban: string } | { address: string });
    };

interface CustomerPage {
  /** The groups whose payments the page serves; for another group's payment it is not found. */
  methods: ReadonlySet<PaymentMethodType>;
  /** The statuses in which the payment waits for the page: its next_action points there and the forms work. */
  awaiting: ReadonlySet<PaymentStatus>;
  /** What the payment waits for, in words, for the page shown once it no longer does. */
  awaitingWhat: string;
  /** The payment's next_action while it waits, given the page's URL. */
  nextAction(payment: Payment, url: string): NextAction;
  /** A status that loading the page moves on from, and where to. */
  onView?: { from: PaymentStatus; to: PaymentStatus };
  render(payment: Payment): string;
  /** The change each of the page's forms (POST /<page>/<id>/<action>) makes before returning to return_url. */
  actions: ReadonlyMap<string, (payment: Payment) => PaymentChanges>;
  /**
   * Whether the forms decide the payment, a change its key hears of by callback. The instructions' "sent"
   * does not: only the funds arriving (or not) decide, and that is what gets the callback.
   */
  formsDecide: boolean;
}

const redirect = (_payment: Payment, url: string): NextAction => ({ type: 'redirect', redirect_url: url });

/** The instructions of a transfer or crypto payment, which it has from its creation. */
function instructionsOf(payment: Payment): Instructions {
  if (payment.instructions === null) throw new Error(`payment ${payment.id} (${payment.paymentMethodType}) has no instructions`);
  return payment.instructions;
}

const CUSTOMER_PAGES = new Map<string, CustomerPage>([
  [
    'challenge',
    {
      methods: new Set(['card']),
      awaiting: new Set(['requires_device_data', 'requires_authentication']),
      awaitingWhat: 'authentication',
      nextAction: redirect,
      // Loading the page is the device-data step: a real issuer fingerprints the browser here.
      onView: { from: 'requires_device_data', to: 'requires_authentication' },
      render: challengePage,
      actions: new Map([
        ['complete', authorizedState],
        ['fail', () => ({ status: 'failed', error: AUTHENTICATION_FAILED })],
      ]),
      formsDecide: true,
    },
  ],
  [
    'bank',
    {
      methods: new Set(['bank_redirect']),
      awaiting: new Set(['requires_authentication']),
      awaitingWhat: 'authorization',
      nextAction: redirect,
      render: bankPage,
      actions: new Map([
        ['authorize', authorizedState],
        ['fail', () => ({ status: 'failed', error: BANK_AUTHORIZATION_FAILED })],
      ]),
      formsDecide: true,
    },
  ],
  [
    'instructions',
    {
      methods: new Set(['bank_transfer', 'crypto']),
      awaiting: new Set(['requires_customer_action']),
      awaitingWhat: 'payment',
      nextAction: (payment, url) => {
        const { reference, ...destination } = instructionsOf(payment);
        return {
          type: 'display_instructions',
          redirect_url: url,
          instructions: { reference, amount: payment.amount, currency: payment.currency, ...destination },
        };
      },
      render: (payment) => instructionsPage(payment, instructionsOf(payment)),
      // The money is on its way; test_helpers fund (or expire) stands for it arriving (or not).
      actions: new Map([['sent', () => ({ status: 'processing' })]]),
      formsDecide: false,
    },
  ],
]);

/** `/<page>/<payment id>` (GET) or `/<page>/<payment id>/<action>` (POST), for a page of CUSTOMER_PAGES. */
const CUSTOMER_PAGE_PATH = /^\/([a-z]+)\/([^/]+)(?:\/([a-z]+))?$/;
const SESSION_ANSWER_PATH = /^\/sessions\/([^/]+)\/([a-z]+)$/;

/** What the customer must do next for `payment`, and where, if it waits for the customer. */
export function nextAction(payment: Payment, publicUrl: string): NextAction | null {
  for (const [name, page] of CUSTOMER_PAGES) {
    if (page.methods.has(payment.paymentMethodType) && page.awaiting.has(payment.status)) return page.nextAction(payment, `${publicUrl}/${name}/${payment.id}`);
  }
  return null;
}

/** Answers a request of the customer's side; false when `path` is none of its routes. */
export async function handleCustomerRequest(
  personalities: readonly Personality[],
  request: IncomingMessage,
  reply: ServerResponse,
  path: string,
): Promise<boolean> {
  const [, pageName, id, action] = CUSTOMER_PAGE_PATH.exec(path) ?? [];
  const page = pageName === undefined ? undefined : CUSTOMER_PAGES.get(pageName);
  if (page !== undefined && id !== undefined) {
    servePage(personalities, request, reply, page, id, action);
    return true;
  }
  const [, token, decision] = SESSION_ANSWER_PATH.exec(path) ?? [];
  if (token !== undefined && decision !== undefined && request.method === 'POST') {
    const answer = await answerOrRefusal(() => ({ status: 200, body: { payment_token: answerInSheet(personalities, token, decision) } }));
    sendJson(reply, answer.status, answer.body);
    return true;
  }
  return false;
}

/** What one personality's store holds under a random id or token, with the store. */
function inAnyStore<T>(personalities: readonly Personality[], find: (store: SandboxStore) => T | undefined): { store: SandboxStore; found: T } | undefined {
  for (const { store } of personalities) {
    const found = find(store);
    if (found !== undefined) return { store, found };
  }
  return undefined;
}

// The forms' bodies are never read: they carry nothing, and Node discards an unread body.
function servePage(
  personalities: readonly Personality[],
  request: IncomingMessage,
  reply: ServerResponse,
  page: CustomerPage,
  id: string,
  action: string | undefined,
): void {
  const change = action === undefined ? undefined : page.actions.get(action);
  if (request.method !== (action === undefined ? 'GET' : 'POST') || (action !== undefined && change === undefined)) return sendHtml(reply, 404, notFoundPage());
  const held = inAnyStore(personalities, (store) => store.findForCustomer(id));
  if (held === undefined || !page.methods.has(held.found.paymentMethodType)) return sendHtml(reply, 404, notFoundPage());
  const { store, found: payment } = held;
  if (change === undefined) {
    if (payment.status === page.onView?.from) store.update(payment, { status: page.onView.to });
    if (page.awaiting.has(payment.status)) return sendHtml(reply, 200, page.render(payment));
    return sendHtml(reply, 409, notAwaitingPage(payment, page.awaitingWhat));
  }
  if (!page.awaiting.has(payment.status)) return sendHtml(reply, 409, notAwaitingPage(payment, page.awaitingWhat));
  if (page.formsDecide) store.updateAndNotify(payment, change(payment));
  else store.update(payment, change(payment));
  reply.writeHead(303, { location: payment.returnUrl, 'content-length': 0 });
  reply.end();
}

/** The wallet's sheet: the customer approves or declines a session; the SDK gets the payment token. */
function answerInSheet(personalities: readonly Personality[], token: string, decision: string): string {
  if (!isWalletDecision(decision)) throw new ApiError(404, 'not_found', `There is no route POST /sessions/{session_token}/${decision}.`);
  const held = inAnyStore(personalities, (store) => store.findSession(token));
  if (held === undefined) throw new ApiError(404, 'resource_missing', 'No session with this token.');
  return answerSession(held.store, held.found, decision);
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
