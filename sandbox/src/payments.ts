// What a sandbox processor does with a request: create a payment of any payment method group (a saved card's
// too, with its customer or without), capture, cancel, receive (or give up on) a transfer's funds, open a
// wallet session and record the customer's answer in it (refunds are in refunds.ts, disputes in disputes.ts,
// saved cards themselves in payment-methods.ts, payouts in payouts.ts). Everything here works on one
// personality's store for one API key; routes.ts reads the requests and render.ts shapes the answers.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { SANDBOX_TRANSFER_IBAN, bankDebitOutcome, ibanValid } from './banks.ts';
import { cardBehaviours, cardBrand, cardFunds, cardOutcome, luhnValid } from './cards.ts';
import { STEERED_DECLINE } from './control.ts';
import { APPROVED, NO_DISPUTE, REFUNDS_SUCCEED, TRANSFER_EXPIRED, type Outcome } from './outcomes.ts';
import { PAYMENT_METHOD_TYPES, type PaymentMethodType } from './processors.ts';
import type { Personality } from './personality.ts';
import { ApiError, referenceParameter } from './requests.ts';
import type { CardSummary, Changeable, Instructions, NewPayment, Payment, PaymentChanges, PaymentStatus, Resource, WalletSession } from './resources.ts';
import type { SandboxStore } from './store.ts';
import { SESSION_TTL_MS, WALLETS, WALLET_DECISIONS, WALLET_TYPES, type WalletDecision, type WalletType } from './wallets.ts';

/** What a route produced (a list only for a GET) and the HTTP status it is answered with (402 for a failed payment). */
export interface RouteResult<R = Resource> {
  httpStatus: number;
  resource: R;
  replayed?: boolean;
}

const CANCELABLE = new Set<PaymentStatus>(['requires_device_data', 'requires_authentication', 'requires_customer_action', 'requires_capture']);

/** The groups whose money moves when the payment completes: there is no hold that could be captured later. */
const NO_MANUAL_CAPTURE = new Set<PaymentMethodType>(['bank_debit', 'bank_transfer', 'crypto']);

/** The groups whose customer sends the money (test_helpers fund and expire stand for it arriving, or not). */
const PUSHED = new Set<PaymentMethodType>(['bank_transfer', 'crypto']);
const AWAITING_FUNDS = new Set<PaymentStatus>(['requires_customer_action', 'processing']);

export const amountSchema = z.number().int('must be an integer').min(1, 'must be at least 1');
export const currencySchema = z.string().regex(/^[A-Za-z]{3}$/, 'must be 3 letters');
const cvcSchema = z.string().regex(/^\d{3,4}$/, 'must be 3 or 4 digits');
/** A card's fields but its CVC, as a payment and a payout take them (the number's check digit is checked after: requireCardNumber). */
export const cardFieldsSchema = z.strictObject({
  number: z.string().regex(/^\d{12,19}$/, 'must be 12 to 19 digits'),
  exp_month: z.number().int('must be an integer').min(1, 'must be 1 to 12').max(12, 'must be 1 to 12'),
  exp_year: z.number().int('must be an integer').min(1000, 'must be a 4-digit year').max(9999, 'must be a 4-digit year'),
  holder_name: z.string().optional(),
});
/** A bank account's fields, as a debit and a payout take them (the IBAN's check digits are checked after: requireIban). */
export const bankAccountFields = {
  account_holder_name: z.string().min(1, 'must not be empty'),
  iban: z.string().regex(/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/, 'must be an IBAN: 15 to 34 capital letters and digits, without spaces'),
};
const walletTokenSchema = (wallet: WalletType) => z.strictObject({ type: z.literal(wallet, `must be "${wallet}"`), payment_token: z.string() });

export const createPaymentSchema = z.strictObject({
  amount: amountSchema,
  currency: currencySchema,
  capture_method: z.enum(['automatic', 'manual'], 'must be "automatic" or "manual"'),
  payment_method_type: z.enum(PAYMENT_METHOD_TYPES, `must be one of ${PAYMENT_METHOD_TYPES.join(', ')}`).optional(),
  card: cardFieldsSchema.extend({ cvc: cvcSchema }).optional(),
  payment_method_token: z.string().optional(),
  card_cvc: cvcSchema.optional(),
  // A merchant-initiated payment with the saved card: the customer is not there to type the CVC or be challenged.
  off_session: z.boolean().optional(),
  setup_future_usage: z.literal('off_session', 'must be "off_session"').optional(),
  // The caller takes an authorization for less than the amount when the card's funds cover only part of it.
  partial_authorization: z.literal('allowed', 'must be "allowed"').optional(),
  bank_debit: z.strictObject(bankAccountFields).optional(),
  wallet: walletTokenSchema('sandbox_pay').optional(),
  pay_later: walletTokenSchema('sandbox_later').optional(),
  bank_redirect: z.strictObject({ bank: z.literal('sandbox_bank', 'must be "sandbox_bank"') }).optional(),
  bank_transfer: z.strictObject({}).optional(),
  crypto: z.strictObject({ network: z.literal('sandbox_chain', 'must be "sandbox_chain"') }).optional(),
  // Required for cards (off session too, where it never leads to a challenge). The other groups authenticate at
  // the bank or in the wallet, so there it has no effect.
  three_ds: z.enum(['required', 'automatic'], 'must be "required" or "automatic"').optional(),
  return_url: z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }),
  reference: z.string().optional(),
});
type CreatePaymentInput = z.infer<typeof createPaymentSchema>;

/** The fields that carry each group's payment method: a payment sends its own group's and no other's. */
const METHOD_FIELDS = {
  card: ['card', 'payment_method_token', 'card_cvc', 'off_session', 'setup_future_usage', 'partial_authorization'],
  bank_debit: ['bank_debit'],
  wallet: ['wallet'],
  pay_later: ['pay_later'],
  bank_redirect: ['bank_redirect'],
  bank_transfer: ['bank_transfer'],
  crypto: ['crypto'],
} as const satisfies Record<PaymentMethodType, readonly (keyof CreatePaymentInput)[]>;

export const captureSchema = z.strictObject({
  amount_to_capture: z.number().int('must be an integer').min(1, 'must be at least 1').optional(),
});

/** The body of the routes that take no parameters (cancel, the test helpers). */
export const noParametersSchema = z.strictObject({});

export const createSessionSchema = z.strictObject({
  wallet: z.enum(WALLET_TYPES, `must be one of ${WALLET_TYPES.join(', ')}`),
  amount: amountSchema,
  currency: currencySchema,
});

/** A payment before the processor's decision, which gives it its status (and maybe more). */
type Draft = Omit<NewPayment, 'status'>;

/**
 * The state once the payment is authorised for its authorized amount (its amount, or less for a partial
 * authorization): charged at once (automatic) or held for a later capture (manual).
 */
export function authorizedState(payment: Pick<Payment, 'authorizedAmount' | 'captureMethod'>): PaymentChanges & Pick<Payment, 'status'> {
  return payment.captureMethod === 'automatic'
    ? { status: 'succeeded', amountCaptured: payment.authorizedAmount, amountCapturable: 0 }
    : { status: 'requires_capture', amountCaptured: 0, amountCapturable: payment.authorizedAmount };
}

function created(store: SandboxStore, fields: NewPayment, httpStatus = 200): RouteResult {
  return { httpStatus, resource: store.createPayment(fields) };
}

/** A payment decided at once: authorised, or failed with 402 (still stored, so a caller can fetch it after a lost answer). */
function decided(store: SandboxStore, draft: Draft, outcome: Outcome): RouteResult {
  if (outcome.kind === 'failed') return created(store, { ...draft, status: 'failed', error: outcome.error }, 402);
  return created(store, { ...draft, ...authorizedState(draft) });
}

export function createPayment(personality: Personality, apiKey: string, input: CreatePaymentInput, settleMs: number): RouteResult {
  const { processor, store } = personality;
  const type = input.payment_method_type ?? 'card';
  if (!processor.paymentMethodTypes.has(type)) {
    throw new ApiError(400, 'payment_method_not_supported', `payment_method_type ${type} is not supported by ${processor.name}.`);
  }
  for (const [group, fields] of Object.entries(METHOD_FIELDS)) {
    const stray = group === type ? undefined : fields.find((field) => input[field] !== undefined);
    if (stray !== undefined) throw new ApiError(400, 'invalid_request', `${stray} is not allowed with payment_method_type ${type}.`);
  }
  if (input.capture_method === 'manual' && NO_MANUAL_CAPTURE.has(type)) {
    throw new ApiError(400, 'invalid_request', `capture_method must be "automatic" for ${type}: the money moves when the payment completes.`);
  }
  const draft: Draft = {
    apiKey,
    amount: input.amount,
    authorizedAmount: input.amount,
    amountCapturable: 0,
    amountCaptured: 0,
    canceledAfterCapture: false,
    currency: input.currency.toLowerCase(),
    captureMethod: input.capture_method,
    reference: input.reference ?? null,
    paymentMethodType: type,
    card: null,
    bankDebit: null,
    instructions: null,
    paymentMethodToken: null,
    refundBehaviour: REFUNDS_SUCCEED,
    disputeBehaviour: NO_DISPUTE,
    settlement: null,
    returnUrl: input.return_url,
    error: null,
  };
  switch (type) {
    case 'card':
      return createCardPayment(personality, apiKey, input, draft);
    case 'bank_debit':
      return createBankDebitPayment(store, methodDetail(input, type), draft, settleMs);
    case 'wallet':
    case 'pay_later':
      return createWalletPayment(store, apiKey, type, methodDetail(input, type), draft);
    case 'bank_redirect':
      methodDetail(input, type);
      // The customer authorizes at the bank's page (next_action), which completes the payment.
      return created(store, { ...draft, status: 'requires_authentication' });
    case 'bank_transfer':
      methodDetail(input, type);
      return awaitingCustomer(store, draft, { reference: store.newTransferReference(), iban: SANDBOX_TRANSFER_IBAN });
    case 'crypto':
      methodDetail(input, type);
      return awaitingCustomer(store, draft, { reference: store.newTransferReference(), address: depositAddress() });
  }
}

/** The detail object of a group other than cards, which a payment of the group must send. */
function methodDetail<K extends Exclude<PaymentMethodType, 'card'>>(input: CreatePaymentInput, type: K): NonNullable<CreatePaymentInput[K]> {
  const detail = input[type];
  if (detail === undefined) throw new ApiError(400, 'invalid_request', `${type} is required with payment_method_type ${type}.`);
  return detail;
}

function createCardPayment({ processor, store, control }: Personality, apiKey: string, input: CreatePaymentInput, draft: Draft): RouteResult {
  if (input.three_ds === undefined) throw new ApiError(400, 'invalid_request', 'three_ds is required.');
  const { number, card } = cardToCharge(store, apiKey, input);
  const outcome = cardOutcome({ number, expMonth: card.expMonth, expYear: card.expYear }, new Date(), processor.cardRules);
  const withCard = { ...draft, card, ...cardBehaviours(number) };
  if (outcome.kind === 'failed') return decided(store, withCard, outcome);
  // Like every decline, funds that fall short are refused before any challenge; a partial authorization
  // decided here is what a challenge completed later authorises.
  const funds = cardFunds(number, draft.amount, input.partial_authorization !== undefined);
  if (funds.kind === 'failed') return decided(store, withCard, funds);
  // A merchant-initiated payment is exempt from 3D Secure: its customer is not there to be challenged.
  const exempt = input.off_session === true;
  const challenged = !exempt && (outcome.kind === 'challenge' || input.three_ds === 'required');
  // The steered declines (control.ts) are of payments approved at once: test cards keep their own answers.
  if (!challenged && control.declinesNext()) return decided(store, withCard, STEERED_DECLINE);
  // A card is saved only once accepted (authorised, or sent to 3D Secure): a declined card is not kept. A
  // saved card paying (payment_method_token) is not saved again, so it gets no new token.
  const save = input.setup_future_usage !== undefined && input.card !== undefined;
  const paymentMethodToken = save ? store.saveCard({ apiKey, number, card }).id : null;
  const accepted = { ...withCard, authorizedAmount: funds.amount, paymentMethodToken };
  if (challenged) return created(store, { ...accepted, status: 'requires_device_data' });
  // Not failed: approved, or a challenge the exemption skips.
  return decided(store, accepted, APPROVED);
}

/**
 * The card a payment charges: the one sent, or the active saved card its payment_method_token stands for,
 * with the CVC the customer typed again or, off session, none.
 */
function cardToCharge(store: SandboxStore, apiKey: string, input: CreatePaymentInput): { number: string; card: CardSummary } {
  if (input.card !== undefined) {
    if (input.payment_method_token !== undefined)
      throw new ApiError(400, 'invalid_request', 'payment_method_token is not allowed with card: send one or the other.');
    if (input.card_cvc !== undefined) throw new ApiError(400, 'invalid_request', 'card_cvc is only for payment_method_token (card has its own cvc).');
    if (input.off_session !== undefined) throw new ApiError(400, 'invalid_request', 'off_session is only for payment_method_token (a saved card).');
    const { number } = input.card;
    requireCardNumber(number, 'card.number');
    const card = {
      brand: cardBrand(number),
      last4: number.slice(-4),
      expMonth: input.card.exp_month,
      expYear: input.card.exp_year,
      holderName: input.card.holder_name ?? null,
    };
    return { number, card };
  }
  if (input.payment_method_token === undefined) {
    if (input.off_session !== undefined) throw new ApiError(400, 'invalid_request', 'off_session is only for payment_method_token (a saved card).');
    throw new ApiError(400, 'invalid_request', 'card is required (or payment_method_token with card_cvc, or with off_session: true).');
  }
  if (input.off_session === true) {
    if (input.card_cvc !== undefined)
      throw new ApiError(400, 'invalid_request', 'card_cvc is not allowed with off_session: true (the customer is not there to type it).');
  } else if (input.card_cvc === undefined) {
    throw new ApiError(400, 'invalid_request', 'card_cvc is required with payment_method_token (or off_session: true).');
  }
  const saved = store.findSavedCard(apiKey, input.payment_method_token);
  if (!saved) throw new ApiError(400, 'invalid_payment_method_token', 'payment_method_token is not a saved card of this API key.');
  if (saved.status === 'revoked') {
    throw new ApiError(400, 'payment_method_revoked', 'payment_method_token was revoked: the saved card can no longer be charged with it.');
  }
  return saved;
}

/** A card number that passes the Luhn check, or a 400 naming `field`. */
export function requireCardNumber(number: string, field: string): void {
  if (!luhnValid(number)) throw new ApiError(400, 'invalid_number', `${field} is not a valid card number (the check digit does not match).`);
}

/** An IBAN whose check digits match, or a 400 naming `field`. */
export function requireIban(iban: string, field: string): void {
  if (!ibanValid(iban)) throw new ApiError(400, 'invalid_iban', `${field} is not a valid IBAN (its check digits do not match).`);
}

function createBankDebitPayment(store: SandboxStore, bankDebit: { iban: string }, draft: Draft, settleMs: number): RouteResult {
  const { iban } = bankDebit;
  requireIban(iban, 'bank_debit.iban');
  const outcome = bankDebitOutcome(iban);
  const changes: PaymentChanges = outcome.kind === 'approved' ? authorizedState(draft) : { status: 'failed', error: outcome.error };
  // A real bank answers a debit days later: the sandbox decides now and lets the answer show once settleMs passed.
  const settlement = { dueMs: Date.now() + settleMs, changes };
  return created(store, { ...draft, status: 'processing', bankDebit: { last4: iban.slice(-4) }, settlement });
}

function createWalletPayment(
  store: SandboxStore,
  apiKey: string,
  type: 'wallet' | 'pay_later',
  detail: { type: WalletType; payment_token: string },
  draft: Draft,
): RouteResult {
  // The messages never quote the token: it is a bearer credential for the customer's approval.
  const refused = (reason: string) => new ApiError(400, 'invalid_payment_token', `${type}.payment_token ${reason}.`);
  const session = store.findSessionByPaymentToken(apiKey, detail.payment_token);
  const answer = session?.answer;
  if (session === undefined || answer == null) throw refused('is not a payment token of this API key');
  if (answer.used) throw refused('was already used: a payment token pays once');
  if (session.wallet !== detail.type) throw refused(`comes from a ${session.wallet} session, not ${detail.type}`);
  if (Date.now() >= session.expiresMs) throw refused('has expired with its session');
  if (session.amount !== draft.amount || session.currency !== draft.currency) {
    throw refused(`was approved for ${session.amount} ${session.currency}, not this payment's amount and currency`);
  }
  answer.used = true;
  return decided(store, draft, WALLET_DECISIONS[answer.decision]);
}

/** A payment the customer completes by sending the money as the instructions (next_action) say. */
function awaitingCustomer(store: SandboxStore, draft: Draft, instructions: Instructions): RouteResult {
  return created(store, { ...draft, status: 'requires_customer_action', instructions });
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** A fresh sandbox_chain deposit address for one payment, shaped like a bech32 address ("sbx1" and 38 characters). */
function depositAddress(): string {
  // 32 characters divide 256 evenly, so every character is equally likely.
  return `sbx1${Array.from(randomBytes(38), (byte) => BECH32[byte % 32]).join('')}`;
}

/** "This payment cannot be captured: its status is …" (a saved card is "this payment method"). */
export const invalidState = (resource: Changeable, operation: string) =>
  new ApiError(409, 'invalid_state', `This ${resource.object.replace('_', ' ')} cannot be ${operation}: its status is ${resource.status}.`);

export function findPayment(store: SandboxStore, apiKey: string, id: string): Payment {
  const payment = store.find(apiKey, id);
  if (!payment) throw new ApiError(404, 'resource_missing', `No payment ${id}.`);
  return payment;
}

/** How a caller finds a payment whose create answer it never received (it timed out): by its own reference. */
export function findPaymentByReference(store: SandboxStore, apiKey: string, query: URLSearchParams): Payment {
  const reference = referenceParameter(query, 'payments');
  const payment = store.findByReference(apiKey, reference);
  if (!payment) throw new ApiError(404, 'resource_missing', `No payment with reference ${reference}.`);
  return payment;
}

export function capturePayment(store: SandboxStore, apiKey: string, id: string, input: z.infer<typeof captureSchema>): RouteResult {
  const payment = findPayment(store, apiKey, id);
  if (payment.status !== 'requires_capture') throw invalidState(payment, 'captured');
  const amount = input.amount_to_capture ?? payment.amountCapturable;
  if (amount > payment.amountCapturable) {
    throw new ApiError(400, 'invalid_request', `amount_to_capture must be at most ${payment.amountCapturable} (the amount capturable).`);
  }
  // As with Stripe, capturing less than the hold releases the rest.
  return { httpStatus: 200, resource: store.update(payment, { status: 'succeeded', amountCaptured: amount, amountCapturable: 0 }) };
}

/**
 * What keeps a succeeded payment from being voided (canceled after capture), the first that applies naming
 * why: only a card payment can be, and only while no money of it was given or claimed back.
 */
const VOID_REFUSALS: readonly { refuses: (store: SandboxStore, payment: Payment) => boolean; reason: string }[] = [
  { refuses: (_store, payment) => payment.paymentMethodType !== 'card', reason: 'only card payments can be voided after capture' },
  // A failed refund gave nothing back.
  { refuses: (store, payment) => store.refundsOf(payment).some((refund) => refund.status !== 'failed'), reason: 'it has refunds' },
  { refuses: (store, payment) => store.disputesOf(payment).length > 0, reason: 'it has a dispute' },
];

/**
 * Cancels a payment before capture (a hold released, or a payment the customer never completed) or, for a
 * succeeded card payment, after it (a void: nothing is charged, `canceled_after_capture`). Cancelling a
 * canceled payment answers it unchanged. The caller's own change: answered, with no callback.
 */
export function cancelPayment(store: SandboxStore, apiKey: string, id: string): RouteResult {
  const payment = findPayment(store, apiKey, id);
  if (payment.status === 'canceled') return { httpStatus: 200, resource: payment };
  if (payment.status === 'succeeded') {
    const refusal = VOID_REFUSALS.find(({ refuses }) => refuses(store, payment));
    if (refusal !== undefined) throw new ApiError(409, 'invalid_state', `This payment cannot be canceled after capture: ${refusal.reason}.`);
    // No longer succeeded, so it can no longer be refunded or disputed (nor disputed by its test card later).
    const voided = { status: 'canceled', amountCaptured: 0, amountCapturable: 0, canceledAfterCapture: true } as const;
    return { httpStatus: 200, resource: store.update(payment, voided) };
  }
  if (!CANCELABLE.has(payment.status)) throw invalidState(payment, 'canceled');
  return { httpStatus: 200, resource: store.update(payment, { status: 'canceled', amountCapturable: 0 }) };
}

/** The test stand-ins for a transfer's or crypto payment's money arriving (`fund`) or never arriving (`expire`). */
export function settlePushedPayment(store: SandboxStore, apiKey: string, id: string, operation: 'fund' | 'expire'): RouteResult {
  const payment = findPayment(store, apiKey, id);
  const done = operation === 'fund' ? 'funded' : 'expired';
  if (!PUSHED.has(payment.paymentMethodType)) {
    throw new ApiError(
      409,
      'invalid_state',
      `This payment cannot be ${done}: it is a ${payment.paymentMethodType} payment, not a bank_transfer or crypto one.`,
    );
  }
  if (!AWAITING_FUNDS.has(payment.status)) throw invalidState(payment, done);
  const changes = operation === 'fund' ? authorizedState(payment) : { status: 'failed' as const, error: TRANSFER_EXPIRED };
  // The helper stands for the customer's bank or chain, not for the caller: the change gets its callback.
  return { httpStatus: 200, resource: store.updateAndNotify(payment, changes) };
}

export function createSession({ processor, store }: Personality, apiKey: string, input: z.infer<typeof createSessionSchema>): RouteResult {
  if (!processor.paymentMethodTypes.has(WALLETS[input.wallet].paymentMethodType)) {
    throw new ApiError(400, 'payment_method_not_supported', `wallet ${input.wallet} is not supported by ${processor.name}.`);
  }
  const session = store.createSession({
    apiKey,
    wallet: input.wallet,
    amount: input.amount,
    currency: input.currency.toLowerCase(),
    expiresMs: Date.now() + SESSION_TTL_MS,
  });
  return { httpStatus: 200, resource: session };
}

/** The customer's answer in the wallet's sheet, and the payment token carrying it (the same one if the answer is repeated). */
export function answerSession(store: SandboxStore, session: WalletSession, decision: WalletDecision): string {
  if (Date.now() >= session.expiresMs) throw new ApiError(409, 'session_expired', 'This session has expired; the merchant must open a new one.');
  if (session.answer === null) return store.answerSession(session, decision);
  if (session.answer.decision !== decision) throw new ApiError(409, 'invalid_state', `This session was already answered with ${session.answer.decision}.`);
  return session.answer.paymentToken;
}
