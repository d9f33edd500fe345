// A local stand-in for Stripe's API, for the Stripe connector's tests. Its objects are Stripe's published fixtures
// (fixtures.json: from Stripe's openapi repository, MIT, LICENSE beside it) filled in with the request's values,
// and its cards behave as Stripe's documented test cards do (docs.stripe.com/testing). The webhooks it sends are
// signed by the official library's generateTestHeaderString, so our verification is checked against Stripe's own.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { IDEAL_BANKS } from '../../../src/modules/connectors/stripe/wire.ts';
import fixtures from './fixtures.json' with { type: 'json' };

type StripeObject = Record<string, unknown>;
type Params = Record<string, unknown>;

/**
 * A test card's outcome: approved, challenged by 3DS, declined with Stripe's codes (a PaymentIntent that failed), or
 * refused as card details Stripe cannot charge before any PaymentIntent exists (a card error without one).
 */
type CardOutcome =
  | { kind: 'approve' }
  /** Authentication on session; off session, approved once set up for it (`afterSetup`), else `authentication_required`. */
  | { kind: '3ds'; offSession: 'afterSetup' | 'never' }
  | { kind: 'decline'; code: string; declineCode: string; message: string }
  | { kind: 'card_error'; code: string; message: string; param: string };

/** Stripe's documented test cards (docs.stripe.com/testing#declined-payments); any other number is approved. */
export const STRIPE_TEST_CARDS: Readonly<Record<string, CardOutcome>> = {
  '4242424242424242': { kind: 'approve' },
  // "Authenticate unless set up" and "Always authenticate" (docs.stripe.com/testing#authentication-and-setup).
  '4000002500003155': { kind: '3ds', offSession: 'afterSetup' },
  '4000002760003184': { kind: '3ds', offSession: 'never' },
  '4000000000000002': { kind: 'decline', code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  '4000000000009995': { kind: 'decline', code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  '4000000000000069': { kind: 'decline', code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.' },
  '4000000000000127': { kind: 'decline', code: 'incorrect_cvc', declineCode: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  // Stripe's 4242 4242 4242 4241 (a wrong check digit) is refused as incorrect_number; our own validation refuses that
  // number before any call, so this Luhn-valid number stands for one Stripe cannot read as a card.
  '4999999999999996': { kind: 'card_error', code: 'incorrect_number', message: 'Your card number is incorrect.', param: 'number' },
};

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  params: Params;
}

export interface FakeStripe {
  url: string;
  /** Every API request received, in order. */
  requests: RecordedRequest[];
  intents: Map<string, StripeObject>;
  disputes: Map<string, StripeObject>;
  /**
   * The customer's bank disputes the intent's charge in full as fraudulent (what Stripe's test card 4000 0000 0000 0259
   * leads to, here on the test's cue): the fixture's dispute, charge.dispute.created.
   */
  openDispute(intentId: string): Promise<StripeObject>;
  /** The network decides a dispute: charge.dispute.closed with `won` or `lost`. */
  decideDispute(disputeId: string, outcome: 'won' | 'lost'): Promise<StripeObject>;
  /** The next `count` requests to `path` are carried out, then their connections dropped before the answer: answers lost on the way. */
  loseAnswers(path: string, count: number): void;
  /**
   * From now on, a declined card's error message is `message(cardNumber)` (null: Stripe's own again), to check
   * that a processor quoting the card number in its error is never kept or shown with it.
   */
  quoteCardInDeclines(message: ((cardNumber: string) => string) | null): void;
  /**
   * When captured money settles: the charge's balance transaction's `available_on` is this many seconds after the capture
   * (two days by default, as Stripe's standard payout schedule holds card payments; docs.stripe.com/payouts#standard-payout-timing).
   */
  settleAfter(seconds: number): void;
  /** Sends an event about `object` to every registered endpoint (awaiting their answers); the answers' statuses. */
  sendEvent(type: string, object: StripeObject): Promise<number[]>;
  close(): Promise<void>;
}

/** Stripe's decline of an off-session payment the bank wants the customer to authenticate (docs.stripe.com/declines/codes). */
const AUTHENTICATION_REQUIRED = {
  kind: 'decline',
  code: 'authentication_required',
  declineCode: 'authentication_required',
  message: 'Your card was declined. This transaction requires authentication.',
} as const;

const refusal = (...args: Parameters<typeof invalidParameter>) => ({ refusal: invalidParameter(...args) });

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Stripe's form encoding (`a[b][c]=v`, lists as `list[0]=v`) as nested objects, lists as arrays. */
export function parseForm(body: string): Params {
  const root: Params = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const [head = '', ...rest] = key.replace(/\]/g, '').split('[');
    const path = [head, ...rest];
    let node = root;
    path.slice(0, -1).forEach((part) => (node = (node[part] ??= {}) as Params));
    node[path.at(-1)!] = value;
  }
  return listsAsArrays(root) as Params;
}

const listsAsArrays = (value: unknown): unknown => {
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value).map(([key, inner]) => [key, listsAsArrays(inner)] as const);
  return entries.length > 0 && entries.every(([key]) => /^\d+$/.test(key)) ? entries.map(([, inner]) => inner) : Object.fromEntries(entries);
};

type Answer = { status: number; body: unknown; invalidParameters?: true };

const stripeError = (status: number, type: string, code: string, message: string, extra: StripeObject = {}): Answer => ({
  status,
  body: { error: { type, code, message, ...extra } },
});

/** A request whose parameters failed validation: Stripe keeps no idempotent result of it (docs.stripe.com/api/idempotent_requests). */
const invalidParameter = (code: string, message: string, param: string): Answer => ({
  ...stripeError(400, 'invalid_request_error', code, message, { param }),
  invalidParameters: true,
});

export async function startFakeStripe(): Promise<FakeStripe> {
  const intents = new Map<string, StripeObject>();
  const refunds = new Map<string, StripeObject>();
  const paymentMethods = new Map<string, StripeObject>();
  /** Each card PaymentMethod's number (Stripe keeps it; its objects show only last4), and those set up for off-session use. */
  const cardNumbers = new Map<string, string>();
  const setUpOffSession = new Set<string>();
  const customers = new Map<string, StripeObject>();
  /** Unused cvc_update tokens: single-use, as Stripe's. */
  const cvcTokens = new Set<string>();
  const disputes = new Map<string, StripeObject>();
  /** Each intent's charge, by the charge's id, and their balance transactions, by theirs. */
  const charges = new Map<string, StripeObject>();
  const balanceTransactions = new Map<string, StripeObject>();
  let settleSeconds = 2 * 24 * 3600;
  const endpoints: { url: string; secret: string }[] = [];
  const idempotent = new Map<string, Answer>();
  const requests: RecordedRequest[] = [];
  const answersToLose = new Map<string, number>();
  let declineMessage: ((cardNumber: string) => string) | null = null;
  const signer = new Stripe('sk_test_signer');
  let url = '';

  async function sendEvent(type: string, object: StripeObject): Promise<number[]> {
    const event = { ...fixtures.event, id: newId('evt'), type, created: now(), data: { object } };
    const payload = JSON.stringify(event);
    return Promise.all(
      endpoints.map(async (endpoint) => {
        const signature = signer.webhooks.generateTestHeaderString({ payload, secret: endpoint.secret });
        const response = await fetch(endpoint.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature },
          body: payload,
        });
        return response.status;
      }),
    );
  }

  function createIntent(params: Params): Answer {
    const connect = destinationRefusal(params);
    if (connect) return connect;
    const methodData = (params.payment_method_data ?? {}) as Params;
    if (methodData.type === 'ideal') {
      const refusal = idealRefusal(params, methodData);
      if (refusal) return refusal;
    }
    const saved = savedMethodOf(params);
    if ('refusal' in saved) return saved.refusal;
    const paymentMethod = saved.paymentMethod ?? createPaymentMethod(methodData);
    const number = cardNumbers.get(String(paymentMethod.id)) ?? '';
    const outcome = STRIPE_TEST_CARDS[number] ?? { kind: 'approve' };
    // Refused card details: Stripe's 402 card error names the parameter, and no PaymentIntent was made to carry it.
    if (outcome.kind === 'card_error') return stripeError(402, 'card_error', outcome.code, outcome.message, { param: outcome.param });
    const offSession = params.off_session === 'true';
    const manual = params.capture_method === 'manual';
    const amount = Number(params.amount);
    const intent: StripeObject = {
      ...fixtures.payment_intent,
      id: newId('pi'),
      created: now(),
      amount,
      currency: params.currency,
      capture_method: manual ? 'manual' : 'automatic',
      confirmation_method: 'automatic',
      metadata: params.metadata ?? {},
      payment_method: paymentMethod.id,
      payment_method_types: [paymentMethod.type],
      customer: params.customer ?? null,
      setup_future_usage: params.setup_future_usage ?? null,
      last_payment_error: null,
      next_action: null,
      canceled_at: null,
      cancellation_reason: null,
      latest_charge: null,
      amount_capturable: 0,
      amount_received: 0,
      return_url: params.return_url,
      application_fee_amount: params.application_fee_amount === undefined ? null : Number(params.application_fee_amount),
      transfer_data: params.transfer_data === undefined ? null : { destination: (params.transfer_data as Params).destination },
    };
    intent.client_secret = `${String(intent.id)}_secret_${randomBytes(8).toString('hex')}`;
    intents.set(String(intent.id), intent);
    // iDEAL in test mode: a page at Stripe where the customer authorizes or fails the payment (docs.stripe.com/payments/ideal/accept-a-payment#test-integration).
    if (methodData.type === 'ideal') return { status: 200, body: requireRedirect(intent, 'ideal') };
    const declined =
      outcome.kind === '3ds' && offSession && !(outcome.offSession === 'afterSetup' && setUpOffSession.has(String(paymentMethod.id)))
        ? AUTHENTICATION_REQUIRED
        : outcome;
    if (declined.kind === 'decline') {
      const message = declineMessage?.(number) ?? declined.message;
      const error = {
        type: 'card_error',
        code: declined.code,
        decline_code: declined.declineCode,
        message,
        doc_url: `https://stripe.com/docs/error-codes/${declined.code}`,
      };
      Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error });
      void sendEvent('payment_intent.payment_failed', intent);
      return stripeError(402, 'card_error', declined.code, message, { decline_code: declined.declineCode, doc_url: error.doc_url, payment_intent: intent });
    }
    if (outcome.kind === '3ds' && !offSession) return { status: 200, body: requireRedirect(intent, '3ds') };
    authorize(intent);
    return { status: 200, body: intent };
  }

  /**
   * Stripe's refusals of a destination charge it cannot make (docs.stripe.com/connect/destination-charges): the destination
   * a Connect account's id, the application fee only with a destination (this fake has no Stripe-Account header) and
   * within the amount.
   */
  function destinationRefusal(params: Params): Answer | null {
    const destination = (params.transfer_data as Params | undefined)?.destination;
    if (destination !== undefined && !/^acct_[A-Za-z0-9]+$/.test(String(destination)))
      return invalidParameter('resource_missing', `No such destination: '${String(destination)}'`, 'transfer_data[destination]');
    if (params.application_fee_amount === undefined) return null;
    if (destination === undefined)
      return invalidParameter(
        'parameter_invalid_integer',
        'Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment (using an OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).',
        'application_fee_amount',
      );
    if (Number(params.application_fee_amount) > Number(params.amount))
      return invalidParameter('parameter_invalid_integer', 'The application_fee_amount must be less than or equal to the amount.', 'application_fee_amount');
    return null;
  }

  /** Stripe's refusals of an iDEAL intent it cannot make: iDEAL is paid in euros, settles at once, and comes back to a return_url. */
  function idealRefusal(params: Params, methodData: Params) {
    const bank = (methodData.ideal as Params | undefined)?.bank;
    if (params.currency !== 'eur')
      return invalidParameter(
        'payment_intent_invalid_parameter',
        `The currency provided (${String(params.currency)}) is invalid. Payments with ideal support the following currencies: eur.`,
        'currency',
      );
    if (params.capture_method === 'manual')
      return invalidParameter('payment_intent_invalid_parameter', 'The payment method type ideal does not support manual capture.', 'capture_method');
    if (params.return_url === undefined) return invalidParameter('parameter_missing', 'Missing required param: return_url.', 'return_url');
    // The banks the library's types name (wire.ts's list is checked against them at compile time).
    if (bank !== undefined && !(IDEAL_BANKS as readonly unknown[]).includes(bank))
      return invalidParameter('parameter_invalid_string', `Invalid payment_method_data[ideal][bank]: ${String(bank)}`, 'payment_method_data[ideal][bank]');
    return null;
  }

  /**
   * The saved PaymentMethod an intent is to be paid with (null when it names none), or Stripe's refusal: the Customer
   * must exist, a PaymentMethod is used again only attached to a Customer and with that Customer, and a cvc_token is a
   * cvc_update token used once.
   */
  function savedMethodOf(params: Params): { paymentMethod: StripeObject | null } | { refusal: Answer } {
    if (params.customer !== undefined && !customers.has(String(params.customer)))
      return refusal('resource_missing', `No such customer: '${String(params.customer)}'`, 'customer');
    if (params.payment_method === undefined) return { paymentMethod: null };
    const paymentMethod = paymentMethods.get(String(params.payment_method));
    if (paymentMethod === undefined) return refusal('resource_missing', `No such PaymentMethod: '${String(params.payment_method)}'`, 'payment_method');
    if (paymentMethod.customer !== params.customer)
      return refusal(
        'payment_method_invalid_parameter',
        paymentMethod.customer === null
          ? 'The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment. It may not be used again. To use a PaymentMethod multiple times, you must attach it to a Customer first.'
          : 'The provided PaymentMethod belongs to a Customer; please include the Customer in the `customer` parameter on the PaymentIntent.',
        'payment_method',
      );
    if (params.off_session === 'true' && params.confirm !== 'true')
      return refusal('parameter_invalid_empty', 'off_session can only be used with confirm=true.', 'off_session');
    const cvcToken = ((params.payment_method_options as Params | undefined)?.card as Params | undefined)?.cvc_token;
    if (cvcToken !== undefined && !cvcTokens.delete(String(cvcToken)))
      return refusal('token_already_used', `No such unused token: '${String(cvcToken)}'`, 'payment_method_options[card][cvc_token]');
    return { paymentMethod };
  }

  /** The PaymentMethod an intent is confirmed with: the fixture, of the type sent (an iDEAL one names its bank). */
  function createPaymentMethod(methodData: Params): StripeObject {
    const { card: fixtureCard, ...fixture } = fixtures.payment_method;
    const number = String((methodData.card as Params | undefined)?.number ?? '');
    const details =
      methodData.type === 'ideal'
        ? { ideal: { bank: (methodData.ideal as Params | undefined)?.bank ?? null, bic: null } }
        : { card: { ...fixtureCard, last4: number.slice(-4) } };
    const method = { ...fixture, id: newId('pm'), created: now(), type: methodData.type, metadata: {}, customer: null, ...details };
    paymentMethods.set(method.id, method);
    if (methodData.type === 'card') cardNumbers.set(method.id, number);
    return method;
  }

  /** The intent waits for the customer at a page of ours (`kind`: 3DS or iDEAL), which sends them back to the return URL. */
  function requireRedirect(intent: StripeObject, kind: '3ds' | 'ideal'): StripeObject {
    return Object.assign(intent, {
      status: 'requires_action',
      next_action: { type: 'redirect_to_url', redirect_to_url: { url: `${url}/${kind}/${String(intent.id)}`, return_url: intent.return_url } },
    });
  }

  /** The card approved: captured at once, or held for a manual capture. */
  function authorize(intent: StripeObject) {
    const amount = Number(intent.amount);
    const manual = intent.capture_method === 'manual';
    const charge: StripeObject = {
      ...fixtures.charge,
      id: newId('ch'),
      created: now(),
      amount,
      amount_captured: 0,
      captured: false,
      currency: intent.currency,
      payment_intent: intent.id,
      payment_method: intent.payment_method,
      balance_transaction: null,
      metadata: {},
    };
    charges.set(String(charge.id), charge);
    Object.assign(intent, {
      status: manual ? 'requires_capture' : 'succeeded',
      next_action: null,
      amount_capturable: manual ? amount : 0,
      amount_received: manual ? 0 : amount,
      latest_charge: charge.id,
    });
    if (!manual) settle(intent, amount);
    // Paid with setup_future_usage and a Customer: the method is attached to them, set up for later payments.
    if (intent.setup_future_usage && intent.customer) {
      paymentMethods.get(String(intent.payment_method))!.customer = intent.customer;
      setUpOffSession.add(String(intent.payment_method));
    }
  }

  /** The intent's charge captured `amount`: its balance transaction, available `settleSeconds` later. */
  function settle(intent: StripeObject, amount: number) {
    const charge = charges.get(String(intent.latest_charge))!;
    const created = now();
    const transaction = {
      ...fixtures.balance_transaction,
      id: newId('txn'),
      created,
      amount,
      net: amount,
      currency: intent.currency,
      available_on: created + settleSeconds,
      status: settleSeconds > 0 ? 'pending' : 'available',
      source: charge.id,
    };
    balanceTransactions.set(transaction.id, transaction);
    Object.assign(charge, { captured: true, amount_captured: amount, balance_transaction: transaction.id });
  }

  /**
   * The object answered as Stripe expands it (docs.stripe.com/expand): an intent's `latest_charge.balance_transaction`,
   * or each listed intent's (`data.` first); other expansions are not known to this fake, and refused as Stripe refuses them.
   */
  function expanded(body: unknown, expand: unknown): Answer {
    const paths = expand === undefined ? [] : Array.isArray(expand) ? expand.map(String) : [String(expand)];
    const unknown = paths.find((path) => path !== 'latest_charge.balance_transaction' && path !== 'data.latest_charge.balance_transaction');
    if (unknown !== undefined) return invalidParameter('parameter_unknown', `This property cannot be expanded (${unknown}).`, 'expand');
    const expandIntent = (intent: StripeObject): StripeObject => {
      const charge = charges.get(String(intent.latest_charge));
      if (charge === undefined) return intent;
      const transaction = charge.balance_transaction === null ? null : balanceTransactions.get(String(charge.balance_transaction));
      return { ...intent, latest_charge: { ...charge, balance_transaction: transaction } };
    };
    if (paths.length === 0) return { status: 200, body };
    const object = body as StripeObject;
    if (object.object === 'search_result') return { status: 200, body: { ...object, data: (object.data as StripeObject[]).map(expandIntent) } };
    return { status: 200, body: object.object === 'payment_intent' ? expandIntent(object) : object };
  }

  function route(method: string, path: string, params: Params): Answer {
    const answer = routeUnexpanded(method, path, params);
    return answer.status === 200 ? expanded(answer.body, params.expand) : answer;
  }

  function routeUnexpanded(method: string, path: string, params: Params): Answer {
    const [, resource, id, action] = path.split('/').slice(1);
    if (method === 'POST' && resource === 'payment_intents' && id === undefined) return createIntent(params);
    if (resource === 'payment_intents' && id === 'search') {
      const reference = /^metadata\['reference'\]:'([^']*)'$/.exec(String(params.query))?.[1];
      const data = [...intents.values()].filter((intent) => (intent.metadata as Params).reference === reference);
      return { status: 200, body: { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' } };
    }
    if (resource === 'payment_intents') {
      const intent = intents.get(String(id));
      if (intent === undefined) return stripeError(404, 'invalid_request_error', 'resource_missing', `No such payment_intent: '${String(id)}'`);
      if (method === 'GET') return { status: 200, body: intent };
      if (action === 'capture') {
        if (intent.status !== 'requires_capture') return unexpectedState(intent, 'capture');
        const amount = params.amount_to_capture === undefined ? Number(intent.amount_capturable) : Number(params.amount_to_capture);
        if (amount > Number(intent.amount_capturable))
          return stripeError(400, 'invalid_request_error', 'amount_too_large', 'The amount to capture is too large.');
        const fee =
          params.application_fee_amount === undefined ? null : destinationRefusal({ ...params, transfer_data: intent.transfer_data ?? undefined, amount });
        if (fee !== null) return fee;
        // The fee given at capture replaces the one given at creation; Stripe caps either at the amount captured.
        const applicationFee = params.application_fee_amount === undefined ? intent.application_fee_amount : Number(params.application_fee_amount);
        Object.assign(intent, { status: 'succeeded', amount_received: amount, amount_capturable: 0, application_fee_amount: applicationFee });
        settle(intent, amount);
        void sendEvent('payment_intent.succeeded', intent);
        return { status: 200, body: intent };
      }
      if (action === 'cancel') {
        if (intent.status === 'succeeded' || intent.status === 'canceled') return unexpectedState(intent, 'cancel');
        Object.assign(intent, { status: 'canceled', amount_capturable: 0, canceled_at: now(), next_action: null });
        void sendEvent('payment_intent.canceled', intent);
        return { status: 200, body: intent };
      }
    }
    if (resource === 'customers' && method === 'POST' && id === undefined) {
      const customer = { ...fixtures.customer, id: newId('cus'), created: now(), metadata: params.metadata ?? {} };
      customers.set(customer.id, customer);
      return { status: 200, body: customer };
    }
    if (resource === 'tokens' && method === 'POST' && params.cvc_update !== undefined) {
      // A cvc_update token names no card (docs.stripe.com/api/tokens/create_cvc_update).
      const token = { ...fixtures.token, card: undefined, id: newId('cvctok'), created: now(), type: 'cvc_update' };
      cvcTokens.add(token.id);
      return { status: 200, body: token };
    }
    if (resource === 'refunds' && method === 'POST' && id === undefined) return createRefund(params);
    if (resource === 'refunds' && id === undefined) return listRefunds(params);
    if (resource === 'refunds') {
      const refund = refunds.get(String(id));
      return refund === undefined
        ? stripeError(404, 'invalid_request_error', 'resource_missing', `No such refund: '${String(id)}'`)
        : { status: 200, body: refund };
    }
    if (resource === 'webhook_endpoints' && method === 'POST') {
      const endpoint = {
        ...fixtures.webhook_endpoint,
        id: newId('we'),
        created: now(),
        url: params.url,
        enabled_events: params.enabled_events,
        api_version: params.api_version ?? null,
        secret: `whsec_${randomBytes(24).toString('hex')}`,
      };
      endpoints.push({ url: String(params.url), secret: endpoint.secret });
      return { status: 200, body: endpoint };
    }
    if (resource === 'payment_methods' && method === 'GET') {
      const paymentMethod = paymentMethods.get(String(id));
      return paymentMethod === undefined
        ? stripeError(404, 'invalid_request_error', 'resource_missing', `No such PaymentMethod: '${String(id)}'`)
        : { status: 200, body: paymentMethod };
    }
    if (resource === 'disputes') return disputeRoute(method, String(id), action, params);
    return stripeError(404, 'invalid_request_error', 'resource_missing', `Unrecognized request URL (${method}: ${path}).`);
  }

  /** Newest first, `limit` at a time (10 by default) after `starting_after`, only `payment_intent`'s when given (docs.stripe.com/api/refunds/list). */
  function listRefunds(params: Params): Answer {
    const matching = [...refunds.values()].reverse().filter((refund) => params.payment_intent === undefined || refund.payment_intent === params.payment_intent);
    const start = params.starting_after === undefined ? 0 : matching.findIndex((refund) => refund.id === params.starting_after) + 1;
    const limit = params.limit === undefined ? 10 : Number(params.limit);
    const data = matching.slice(start, start + limit);
    return { status: 200, body: { object: 'list', data, has_more: start + limit < matching.length, url: '/v1/refunds' } };
  }

  /**
   * A dispute retrieved, closed (the merchant concedes: `lost`) or updated with evidence, submitted at once with
   * `submit=true` (`under_review`). Evidence fields must be Stripe's own: the fixture's (docs.stripe.com/api/disputes/update).
   */
  function disputeRoute(method: string, id: string, action: string | undefined, params: Params): Answer {
    const dispute = disputes.get(id);
    if (dispute === undefined) return stripeError(404, 'invalid_request_error', 'resource_missing', `No such dispute: '${id}'`);
    if (method === 'GET') return { status: 200, body: dispute };
    const open = dispute.status === 'needs_response' || dispute.status === 'warning_needs_response';
    if (!open) return stripeError(400, 'invalid_request_error', 'dispute_already_closed', `This dispute is already ${String(dispute.status)}.`);
    if (action === 'close') {
      Object.assign(dispute, { status: dispute.status === 'warning_needs_response' ? 'warning_closed' : 'lost' });
      void sendEvent('charge.dispute.closed', dispute);
      return { status: 200, body: dispute };
    }
    const evidence = (params.evidence ?? {}) as Params;
    const unknown = Object.keys(evidence).find((field) => !Object.hasOwn(fixtures.dispute.evidence, field));
    if (unknown !== undefined) return invalidParameter('parameter_unknown', `Received unknown parameter: evidence[${unknown}]`, `evidence[${unknown}]`);
    const details = dispute.evidence_details as Params;
    const submitted = params.submit === 'true';
    Object.assign(dispute, {
      evidence: { ...(dispute.evidence as Params), ...evidence },
      evidence_details: { ...details, has_evidence: true, submission_count: Number(details.submission_count) + (submitted ? 1 : 0) },
      ...(submitted ? { status: dispute.status === 'warning_needs_response' ? 'warning_under_review' : 'under_review' } : {}),
    });
    void sendEvent('charge.dispute.updated', dispute);
    return { status: 200, body: dispute };
  }

  async function openDispute(intentId: string): Promise<StripeObject> {
    const intent = intents.get(intentId);
    if (intent === undefined) throw new Error(`no intent ${intentId}`);
    const dispute: StripeObject = {
      ...fixtures.dispute,
      id: newId('dp'),
      created: now(),
      amount: intent.amount_received,
      currency: intent.currency,
      charge: intent.latest_charge,
      payment_intent: intent.id,
      reason: 'fraudulent',
      status: 'needs_response',
      evidence_details: { ...fixtures.dispute.evidence_details, due_by: now() + 7 * 24 * 3600 },
    };
    disputes.set(String(dispute.id), dispute);
    await sendEvent('charge.dispute.created', dispute);
    return dispute;
  }

  async function decideDispute(disputeId: string, outcome: 'won' | 'lost'): Promise<StripeObject> {
    const dispute = disputes.get(disputeId)!;
    dispute.status = outcome;
    await sendEvent('charge.dispute.closed', dispute);
    return dispute;
  }

  function createRefund(params: Params): Answer {
    const intent = intents.get(String(params.payment_intent));
    if (intent === undefined)
      return stripeError(400, 'invalid_request_error', 'resource_missing', `No such payment_intent: '${String(params.payment_intent)}'`);
    const refunded = [...refunds.values()].filter((refund) => refund.payment_intent === intent.id).reduce((sum, refund) => sum + Number(refund.amount), 0);
    const remaining = Number(intent.amount_received) - refunded;
    const amount = params.amount === undefined ? remaining : Number(params.amount);
    if (intent.status !== 'succeeded') return stripeError(400, 'invalid_request_error', 'charge_not_refundable', 'This payment has not been captured.');
    if (amount > remaining)
      return stripeError(400, 'invalid_request_error', 'amount_too_large', `Refund amount (${amount}) is greater than the unrefunded amount (${remaining}).`);
    // Stripe's refusals of what a charge does not have: a transfer to reverse, an application fee to refund.
    if (params.reverse_transfer === 'true' && intent.transfer_data === null)
      return invalidParameter(
        'charge_invalid_parameter',
        `Attempting to reverse_transfer on ${String(intent.latest_charge)}, but it has no transfer.`,
        'reverse_transfer',
      );
    if (params.refund_application_fee === 'true' && !(Number(intent.application_fee_amount) > 0))
      return invalidParameter(
        'charge_invalid_parameter',
        `Attempting to refund_application_fee on ${String(intent.latest_charge)}, but it has no application fee`,
        'refund_application_fee',
      );
    const refund = {
      ...fixtures.refund,
      id: newId('re'),
      created: now(),
      amount,
      currency: intent.currency,
      charge: intent.latest_charge,
      payment_intent: intent.id,
      metadata: params.metadata ?? {},
      status: 'succeeded',
    };
    refunds.set(refund.id, refund);
    void sendEvent('refund.created', refund);
    return { status: 200, body: refund };
  }

  const unexpectedState = (intent: StripeObject, action: string) =>
    stripeError(
      400,
      'invalid_request_error',
      'payment_intent_unexpected_state',
      `You cannot ${action} this PaymentIntent because it has a status of ${String(intent.status)}.`,
      // As Stripe's: the intent as it stands (client_secret included) and the code's documentation.
      { payment_intent: intent, doc_url: 'https://stripe.com/docs/error-codes/payment-intent-unexpected-state' },
    );

  /**
   * The page an intent's redirect leads to (a 3DS challenge or iDEAL's bank), as Stripe's test pages offer: complete
   * (authorized) or fail, which sends the customer back to the return URL with the outcome.
   */
  function redirectPage(method: string, path: string, reply: ServerResponse) {
    const [kind = '', id = '', action] = path.split('/').slice(1);
    const intent = intents.get(id);
    if (intent === undefined || intent.status !== 'requires_action') return send(reply, 404, { error: { message: 'No such redirect.' } });
    if (method === 'GET' && action === undefined) {
      reply.writeHead(200, { 'content-type': 'text/html' });
      return reply.end(
        `<form method="post" action="/${kind}/${id}/complete"><button>Authorize test payment</button></form>` +
          `<form method="post" action="/${kind}/${id}/fail"><button>Fail test payment</button></form>`,
      );
    }
    if (method !== 'POST' || (action !== 'complete' && action !== 'fail')) return send(reply, 404, { error: { message: 'No such redirect.' } });
    if (action === 'complete') {
      authorize(intent);
      void sendEvent(intent.capture_method === 'automatic' ? 'payment_intent.succeeded' : 'payment_intent.amount_capturable_updated', intent);
    } else {
      // Stripe's answer to a failed authentication: the method detached, the intent back to requires_payment_method.
      Object.assign(intent, {
        status: 'requires_payment_method',
        next_action: null,
        payment_method: null,
        last_payment_error: {
          type: 'invalid_request_error',
          code: 'payment_intent_authentication_failure',
          message:
            'The latest payment attempt of this PaymentIntent has failed or been canceled, and the attached payment method has been removed. You can try confirming again with a new payment method.',
        },
      });
      void sendEvent('payment_intent.payment_failed', intent);
    }
    const back = new URL(String(intent.return_url));
    back.searchParams.set('payment_intent', id);
    back.searchParams.set('redirect_status', action === 'complete' ? 'succeeded' : 'failed');
    reply.writeHead(302, { location: back.toString() });
    reply.end();
  }

  async function handle(request: IncomingMessage, reply: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    if (/^\/(3ds|ideal)\//.test(target.pathname)) return redirectPage(method, target.pathname, reply);
    if (!/^Bearer sk_test_\w+$/.test(request.headers.authorization ?? ''))
      return send(reply, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } });
    const params = parseForm(method === 'GET' ? target.search.slice(1) : Buffer.concat(chunks).toString('utf8'));
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
    requests.push({ method, path: target.pathname, idempotencyKey, params });
    // Stripe answers a key it has seen with the first answer, whatever the second request says.
    const replayed = idempotencyKey === undefined ? undefined : idempotent.get(idempotencyKey);
    const answer = replayed ?? route(method, target.pathname, params);
    if (idempotencyKey !== undefined && method === 'POST' && !answer.invalidParameters) idempotent.set(idempotencyKey, answer);
    const toLose = answersToLose.get(target.pathname) ?? 0;
    if (toLose > 0) {
      answersToLose.set(target.pathname, toLose - 1);
      return void request.socket.destroy();
    }
    send(reply, answer.status, answer.body);
  }

  const server = createServer((request, reply) => {
    handle(request, reply).catch((error: unknown) => send(reply, 500, { error: { type: 'api_error', message: String(error) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    intents,
    disputes,
    openDispute,
    decideDispute,
    loseAnswers: (path, count) => void answersToLose.set(path, count),
    quoteCardInDeclines: (message) => {
      declineMessage = message;
    },
    settleAfter: (seconds) => {
      settleSeconds = seconds;
    },
    sendEvent,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function send(reply: ServerResponse, status: number, body: unknown) {
  reply.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
  reply.end(JSON.stringify(body));
}
