// Every payment method group of the seed's flow table, end to end through the sandbox processors over
// HTTP (the customer's pages driven as a browser would), then routing, retries across processors, the
// SDK's eligible methods and sessions, and saved cards.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { PAYMENT_METHOD_GROUPS, type PaymentMethodType } from '../../src/modules/payments/methods.ts';
import {
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CustomerDocument,
  PaymentDocument,
  PaymentMethodsDocument,
  PaymentSessionsDocument,
  UpdateBusinessProfileDocument,
  type CreatePaymentInput,
  type PaymentMethodDataInput,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

const card = (number: string, cvc = '123') => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc } });

let stack: Stack;
let sql: pg.Client;

beforeAll(async () => {
  // Bank debits settle 100 ms after they are created, as seen by the next sync.
  stack = await startStack({ sandboxBankDebitSettleMs: 100 });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

type Shop = Awaited<ReturnType<typeof merchantWithSandbox>>;

async function createPayment(shop: Shop, input: Partial<CreatePaymentInput> = {}) {
  return dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 2000, currency: 'EUR', returnUrl: 'https://shop.example/done', ...input } }))
    .createPayment;
}

const confirmWith = (shop: Shop, clientSecret: string, paymentMethodData: PaymentMethodDataInput) =>
  shop.publishable(ConfirmPaymentDocument, { input: { clientSecret, paymentMethodData } });

const getPayment = async (shop: Shop, id: string) => dataOf(await shop.secret(PaymentDocument, { id })).payment;

/** Waits until the payment leaves PROCESSING and REQUIRES_CUSTOMER_ACTION (the worker's scheduled sync), up to 10 s. */
async function settled(shop: Shop, id: string) {
  for (const started = Date.now(); ;) {
    const payment = await getPayment(shop, id);
    if (payment.status !== 'PROCESSING' && payment.status !== 'REQUIRES_CUSTOMER_ACTION') return payment;
    if (Date.now() - started > 10_000) throw new Error(`payment ${id} still ${payment.status} after 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Follows the processor's page as the customer's browser: `path` posted, then our redirect route, then the merchant. */
async function actOnPage(pageUrl: string, action: string): Promise<URL> {
  expect((await fetch(pageUrl)).status).toBe(200);
  const submitted = await fetch(`${pageUrl}/${action}`, { method: 'POST', redirect: 'manual' });
  expect(submitted.status).toBe(303);
  const back = await fetch(submitted.headers.get('location')!, { redirect: 'manual' });
  expect(back.status).toBe(302);
  return new URL(back.headers.get('location')!);
}

/** The wallet sheet: opens a session through the API (as the SDK), approves it at the provider, returns the token. */
async function walletToken(shop: Shop, clientSecret: string, provider: string, decision: 'approve' | 'decline' = 'approve') {
  const [session] = dataOf(await shop.publishable(PaymentSessionsDocument, { clientSecret, wallets: [provider] })).paymentSessions;
  expect(session).toMatchObject({ provider, connector: 'sandbox' });
  const answer = await fetch(`${stack.sandboxUrl}/sessions/${session!.sessionToken}/${decision}`, { method: 'POST' });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { payment_token: string }).payment_token;
}

/** Funds a transfer at the sandbox, as the bank or chain would. */
async function fund(shop: Shop, transactionId: string) {
  const response = await fetch(`${stack.sandboxUrl}/v1/test_helpers/payments/${transactionId}/fund`, {
    method: 'POST',
    headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(response.status).toBe(200);
}

/**
 * Each method type driven through its flow: confirm, the customer's part where the group has one, and
 * the processor's outcome. Returns the status right after the customer's part (before any later
 * finalization) and the final payment.
 */
const FLOWS: Record<PaymentMethodType | 'card_3ds', (shop: Shop) => Promise<{ afterCustomer: string; final: Awaited<ReturnType<typeof getPayment>> }>> = {
  card: async (shop) => {
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, card('4242424242424242'))).confirmPayment;
    return { afterCustomer: confirmed.status, final: await settled(shop, created.id) };
  },
  card_3ds: async (shop) => {
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, card('4000002500003155'))).confirmPayment;
    expect(confirmed).toMatchObject({ status: 'REQUIRES_CUSTOMER_ACTION', nextAction: { type: 'REDIRECT_TO_URL' } });
    const landing = await actOnPage(confirmed.nextAction!.redirectToUrl, 'complete');
    return { afterCustomer: landing.searchParams.get('status')!.toUpperCase(), final: await settled(shop, created.id) };
  },
  bank_debit: async (shop) => {
    const created = await createPayment(shop);
    const confirmed = dataOf(
      await confirmWith(shop, created.clientSecret, { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89 3704 0044 0532 0130 00' } }),
    ).confirmPayment;
    expect(confirmed.activeAttempt.paymentMethodDetails).toEqual({ accountHolderName: 'Ada Lovelace', ibanLast4: '3000' });
    return { afterCustomer: confirmed.status, final: await settled(shop, created.id) };
  },
  wallet: async (shop) => {
    const created = await createPayment(shop);
    const paymentToken = await walletToken(shop, created.clientSecret, 'sandbox_pay');
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, { wallet: { type: 'sandbox_pay', paymentToken } })).confirmPayment;
    expect(confirmed.activeAttempt.paymentMethodDetails).toEqual({ provider: 'sandbox_pay' });
    return { afterCustomer: confirmed.status, final: await settled(shop, created.id) };
  },
  pay_later: async (shop) => {
    const created = await createPayment(shop);
    const paymentToken = await walletToken(shop, created.clientSecret, 'sandbox_later');
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, { payLater: { type: 'sandbox_later', paymentToken } })).confirmPayment;
    return { afterCustomer: confirmed.status, final: await settled(shop, created.id) };
  },
  bank_redirect: async (shop) => {
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, { bankRedirect: { bank: 'sandbox_bank' } })).confirmPayment;
    expect(confirmed).toMatchObject({ status: 'REQUIRES_CUSTOMER_ACTION', nextAction: { type: 'REDIRECT_TO_URL' } });
    expect(confirmed.activeAttempt.status).toBe('AUTHENTICATION_PENDING');
    const landing = await actOnPage(confirmed.nextAction!.redirectToUrl, 'authorize');
    expect(Object.fromEntries(landing.searchParams)).toEqual({ payment_id: created.id, status: 'succeeded' });
    return { afterCustomer: landing.searchParams.get('status')!.toUpperCase(), final: await settled(shop, created.id) };
  },
  bank_transfer: async (shop) => transferFlow(shop, { bankTransfer: { type: 'sepa' } }, 'iban'),
  crypto: async (shop) => transferFlow(shop, { crypto: { network: 'sandbox_chain' } }, 'address'),
};

async function transferFlow(shop: Shop, paymentMethodData: PaymentMethodDataInput, payTo: 'iban' | 'address') {
  const created = await createPayment(shop);
  const confirmed = dataOf(await confirmWith(shop, created.clientSecret, paymentMethodData)).confirmPayment;
  expect(confirmed).toMatchObject({ status: 'REQUIRES_CUSTOMER_ACTION', nextAction: { type: 'DISPLAY_INSTRUCTIONS' } });
  expect(confirmed.nextAction!.instructions).toMatchObject({ amount: 2000, currency: 'eur', reference: expect.any(String), [payTo]: expect.any(String) });
  const landing = await actOnPage(confirmed.nextAction!.redirectToUrl, 'sent');
  const afterCustomer = landing.searchParams.get('status')!.toUpperCase();
  // The customer says it is sent; the processor has not seen the money yet: no sync may finish it.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await getPayment(shop, created.id)).status).toBe('PROCESSING');
  await fund(shop, confirmed.activeAttempt.connectorTransactionId!);
  return { afterCustomer, final: await settled(shop, created.id) };
}

describe('every payment method group of the seed, end to end', () => {
  let shop: Shop;
  beforeAll(async () => {
    shop = await merchantWithSandbox(stack);
  });

  const rows = PAYMENT_METHOD_GROUPS.flatMap((row) =>
    row.types.map((type) => ({ ...row, type, flow: type === 'card' && row.threeDs ? ('card_3ds' as const) : type })),
  );

  it.each(rows)('$group: $type ($customerAction; finalization $finalization)', async ({ flow, finalization }) => {
    const { afterCustomer, final } = await FLOWS[flow](shop);
    // Immediate finalization: the customer's part ends the payment; later: it waits on the processor.
    expect(afterCustomer).toBe(finalization === 'immediate' ? 'SUCCEEDED' : 'PROCESSING');
    expect(final.status).toBe('SUCCEEDED');
    expect(final.activeAttempt.status).toBe('CHARGED');
    expect(final.amountReceived).toBe(2000);
  });

  it.each([
    ['DE62370400440532013001', 'insufficient_funds'],
    ['DE35370400440532013002', 'account_closed'],
  ])('a bank debit from %s fails later with %s, through the scheduled sync', async (iban, code) => {
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, { bankDebit: { accountHolderName: 'Ada Lovelace', iban } })).confirmPayment;
    expect(confirmed.status).toBe('PROCESSING');
    const final = await settled(shop, created.id);
    expect(final).toMatchObject({ status: 'FAILED', errorCode: code });
  });

  it('a declined wallet approval fails the payment with wallet_declined', async () => {
    const created = await createPayment(shop);
    const paymentToken = await walletToken(shop, created.clientSecret, 'sandbox_pay', 'decline');
    const error = errorOf(await confirmWith(shop, created.clientSecret, { wallet: { type: 'sandbox_pay', paymentToken } }), 'PAYMENT_DECLINED');
    expect(error.extensions?.declineCode).toBe('wallet_declined');
  });

  it('a bank redirect the customer refuses fails the payment', async () => {
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, { bankRedirect: { bank: 'sandbox_bank' } })).confirmPayment;
    const landing = await actOnPage(confirmed.nextAction!.redirectToUrl, 'fail');
    expect(landing.searchParams.get('status')).toBe('failed');
    expect((await getPayment(shop, created.id)).errorCode).toBe('bank_authorization_failed');
  });

  // Our input takes any provider name; only the processor knows which it serves. Its well-formed refusal
  // is its answer about this payment method (402 with its code and message), not a gateway failure (5xx).
  it.each<[string, PaymentMethodDataInput, string]>([
    ['a crypto network', { crypto: { network: 'other_chain' } }, 'crypto.network must be "sandbox_chain"'],
    ['a bank', { bankRedirect: { bank: 'other_bank' } }, 'bank_redirect.bank must be "sandbox_bank"'],
  ])('%s the processor does not take is declined with its code and message, and the payment is FAILED', async (_what, paymentMethodData, message) => {
    const created = await createPayment(shop);
    const answer = await confirmWith(shop, created.clientSecret, paymentMethodData);
    expect(answer.status).toBe(402);
    const error = errorOf(answer, 'PAYMENT_DECLINED');
    expect(error.extensions).toMatchObject({ declineCode: 'connector_error', processorCode: 'invalid_request', paymentId: created.id, status: 'FAILED' });
    expect(error.extensions?.declineMessage).toContain(message);
    expect(await getPayment(shop, created.id)).toMatchObject({
      status: 'FAILED',
      errorCode: 'connector_error',
      processorErrorCode: 'invalid_request',
      activeAttempt: { status: 'AUTHORIZATION_FAILED' },
    });
  });

  it('refuses manual capture for methods that settle later, naming the field', async () => {
    const error = errorOf(
      await shop.secret(CreatePaymentDocument, {
        input: {
          amount: 100,
          currency: 'EUR',
          captureMethod: 'MANUAL',
          paymentMethodData: { bankDebit: { accountHolderName: 'A', iban: 'DE89370400440532013000' } },
        },
      }),
      'INVALID_INPUT',
    );
    expect(error.extensions?.field).toBe('captureMethod');
  });

  it('refuses an IBAN that fails its check digits, naming the field, without echoing it', async () => {
    const created = await createPayment(shop);
    const error = errorOf(
      await confirmWith(shop, created.clientSecret, { bankDebit: { accountHolderName: 'A', iban: 'DE89370400440532013001' } }),
      'INVALID_INPUT',
    );
    expect(error.extensions?.field).toBe('paymentMethodData.bankDebit.iban');
    expect(error.message).not.toContain('DE89370400440532013001');
  });

  it('never stores an IBAN or a wallet token', async () => {
    const { rows } = await sql.query('SELECT t::text AS row FROM payment_attempts t JOIN payment_intents i ON i.id = t.payment_id WHERE i.merchant_id = $1', [
      shop.merchantId,
    ]);
    const text = rows.map((row) => row.row).join('\n');
    expect(text).not.toContain('DE89370400440532013000');
    expect(text).not.toMatch(/wtok_/);
  });
});

describe('retries across processors', () => {
  /** A merchant with sandbox and fauxpay accounts, routed in `routing` order, with the profile's retry settings. */
  async function twoProcessorShop(routing: string[], retry: { maxRetries?: number; retryableDeclineCodes?: string[] } = {}) {
    const shop = await merchantWithSandbox(stack);
    await addConnectorAccount(stack, shop, 'fauxpay');
    dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, routing, ...retry } }));
    return shop;
  }

  async function attemptsOf(shop: Shop, paymentId: string) {
    return (await getPayment(shop, paymentId)).attempts.map((attempt) => `${attempt.connector}:${attempt.status}`);
  }

  it('a retryable processor error on A, then success on B: two attempts, a succeeded payment', async () => {
    const shop = await twoProcessorShop(['sandbox', 'fauxpay']);
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, card('4000000000000119'))).confirmPayment;
    expect(confirmed).toMatchObject({ status: 'SUCCEEDED', connector: 'fauxpay', attemptCount: 2 });
    expect(confirmed.activeAttempt).toMatchObject({ attemptNumber: 2, status: 'CHARGED' });
    expect(await attemptsOf(shop, created.id)).toEqual(['sandbox:FAILURE', 'fauxpay:CHARGED']);
    const { history } = await getPayment(shop, created.id);
    // Each attempt has its own history; the intent never left PROCESSING in between.
    expect(
      history
        .filter((row) => row.subject === 'attempt')
        .map((row) => `${row.fromStatus}>${row.toStatus}:${row.trigger}`)
        .slice(-4),
    ).toEqual(['CONFIRMATION_AWAITED>PENDING:confirm', 'PENDING>FAILURE:processor_call', 'null>PENDING:retry', 'PENDING>CHARGED:processor_call']);
    expect(history.filter((row) => row.subject === 'intent').map((row) => row.toStatus)).toEqual([
      'REQUIRES_PAYMENT_METHOD',
      'REQUIRES_CONFIRMATION',
      'PROCESSING',
      'SUCCEEDED',
    ]);
  });

  it('a card one processor does not support (card_not_supported, retryable) goes to the other', async () => {
    const shop = await twoProcessorShop(['fauxpay', 'sandbox']);
    const created = await createPayment(shop);
    const confirmed = dataOf(await confirmWith(shop, created.clientSecret, card('378282246310005', '1234'))).confirmPayment;
    expect(confirmed.status).toBe('SUCCEEDED');
    expect(await attemptsOf(shop, created.id)).toEqual(['fauxpay:FAILURE', 'sandbox:CHARGED']);
  });

  it.each([
    ['a hard decline (insufficient_funds)', '4000000000009995', {}],
    ['a plain decline the profile does not retry', '4000000000000002', {}],
    ['a retryable error when the profile allows no retries', '4000000000000119', { maxRetries: 0 }],
  ])('%s: one attempt, a failed payment', async (_name, number, retry) => {
    const shop = await twoProcessorShop(['sandbox', 'fauxpay'], retry);
    const created = await createPayment(shop);
    errorOf(await confirmWith(shop, created.clientSecret, card(number)), 'PAYMENT_DECLINED');
    expect(await attemptsOf(shop, created.id)).toEqual(['sandbox:AUTHORIZATION_FAILED']);
    expect((await getPayment(shop, created.id)).status).toBe('FAILED');
  });

  it('a decline code the profile marks retryable is tried on every connector, then fails', async () => {
    const shop = await twoProcessorShop(['sandbox', 'fauxpay'], { retryableDeclineCodes: ['card_declined'] });
    const created = await createPayment(shop);
    errorOf(await confirmWith(shop, created.clientSecret, card('4000000000000002')), 'PAYMENT_DECLINED');
    expect(await attemptsOf(shop, created.id)).toEqual(['sandbox:FAILURE', 'fauxpay:AUTHORIZATION_FAILED']);
  });

  it('refuses to mark a hard decline retryable, naming the field', async () => {
    const shop = await merchantWithSandbox(stack);
    const error = errorOf(
      await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, retryableDeclineCodes: ['card_declined', 'stolen_card'] } }),
      'INVALID_INPUT',
    );
    expect(error.extensions?.field).toBe('retryableDeclineCodes.1');
  });

  it('the payment’s own connector list routes it to those connectors only', async () => {
    const shop = await twoProcessorShop(['sandbox', 'fauxpay']);
    const created = await createPayment(shop, { connectors: ['fauxpay'] });
    errorOf(await confirmWith(shop, created.clientSecret, card('4000000000000002')), 'PAYMENT_DECLINED');
    expect(await attemptsOf(shop, created.id)).toEqual(['fauxpay:AUTHORIZATION_FAILED']);
  });

  it('manual retry: a failed payment confirmed again with another card succeeds on a new attempt, bounded by its state', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = await createPayment(shop);
    errorOf(await confirmWith(shop, created.clientSecret, card('4000000000000002')), 'PAYMENT_DECLINED');
    const retried = dataOf(await confirmWith(shop, created.clientSecret, card('4242424242424242'))).confirmPayment;
    expect(retried).toMatchObject({ status: 'SUCCEEDED', attemptCount: 2, errorCode: null, processorErrorCode: null });
    expect(await attemptsOf(shop, created.id)).toEqual(['sandbox:AUTHORIZATION_FAILED', 'sandbox:CHARGED']);
    const { history } = await getPayment(shop, created.id);
    expect(
      history
        .filter((row) => row.subject === 'intent')
        .map((row) => `${row.fromStatus}>${row.toStatus}`)
        .slice(-3),
    ).toEqual(['PROCESSING>FAILED', 'FAILED>PROCESSING', 'PROCESSING>SUCCEEDED']);
    errorOf(await confirmWith(shop, created.clientSecret, card('4242424242424242')), 'INVALID_STATE');
  });
});

describe('what the SDK is told before confirming', () => {
  const typesOf = (answer: { methods: { type: string }[] }) => answer.methods.map((method) => method.type);

  it('sandbox only: every group, with the wallet and pay-later providers, and the seed’s flow per method', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = await createPayment(shop);
    const answer = dataOf(await shop.publishable(PaymentMethodsDocument, { clientSecret: created.clientSecret })).paymentMethods;
    expect(typesOf(answer)).toEqual(['CARD', 'BANK_DEBIT', 'WALLET', 'PAY_LATER', 'BANK_REDIRECT', 'BANK_TRANSFER', 'CRYPTO']);
    expect(answer.methods.find((method) => method.type === 'BANK_DEBIT')).toMatchObject({
      group: 'bank debits',
      finalization: 'later',
      connectors: ['sandbox'],
    });
    expect(answer.methods.find((method) => method.type === 'WALLET')!.providers).toEqual([{ provider: 'sandbox_pay', type: 'WALLET' }]);
    const sessions = dataOf(await shop.publishable(PaymentSessionsDocument, { clientSecret: created.clientSecret })).paymentSessions;
    expect(sessions.map((session) => `${session.provider}:${session.type}:${session.connector}`)).toEqual([
      'sandbox_pay:WALLET:sandbox',
      'sandbox_later:PAY_LATER:sandbox',
    ]);
    expect(sessions.every((session) => session.sessionToken.length > 0 && new Date(session.expiresAt) > new Date())).toBe(true);
  });

  it('fauxpay only: cards and bank debits, and no sessions to open', async () => {
    const shop = await merchantWithSandbox(stack, 'fauxpay');
    const created = await createPayment(shop);
    expect(typesOf(dataOf(await shop.publishable(PaymentMethodsDocument, { clientSecret: created.clientSecret })).paymentMethods)).toEqual([
      'CARD',
      'BANK_DEBIT',
    ]);
    expect(dataOf(await shop.publishable(PaymentSessionsDocument, { clientSecret: created.clientSecret })).paymentSessions).toEqual([]);
    const refused = errorOf(await shop.publishable(PaymentSessionsDocument, { clientSecret: created.clientSecret, wallets: ['sandbox_pay'] }), 'INVALID_INPUT');
    expect(refused.extensions?.field).toBe('wallets.0');
  });

  it('currencies, countries and the capture method narrow what is offered', async () => {
    const shop = await merchantWithSandbox(stack, 'sandbox', { currencies: ['EUR'], countries: ['DE', 'NL'] });
    await addConnectorAccount(stack, shop, 'fauxpay', { paymentMethods: ['card'] });
    const methodsFor = async (input: Partial<CreatePaymentInput>) => {
      const created = await createPayment(shop, input);
      const answer = dataOf(await shop.publishable(PaymentMethodsDocument, { clientSecret: created.clientSecret })).paymentMethods;
      return answer.methods.map((method) => `${method.type}:${method.connectors.join('+')}`);
    };
    expect(await methodsFor({ currency: 'EUR', country: 'DE' })).toEqual([
      'CARD:sandbox+fauxpay',
      'BANK_DEBIT:sandbox',
      'WALLET:sandbox',
      'PAY_LATER:sandbox',
      'BANK_REDIRECT:sandbox',
      'BANK_TRANSFER:sandbox',
      'CRYPTO:sandbox',
    ]);
    expect(await methodsFor({ currency: 'USD', country: 'DE' })).toEqual(['CARD:fauxpay']);
    expect(await methodsFor({ currency: 'EUR', country: 'FR' })).toEqual(['CARD:fauxpay']);
    expect(await methodsFor({ currency: 'EUR', country: 'DE', captureMethod: 'MANUAL' })).toEqual([
      'CARD:sandbox+fauxpay',
      'WALLET:sandbox',
      'PAY_LATER:sandbox',
      'BANK_REDIRECT:sandbox',
    ]);
  });

  it('needs the payment’s own client secret', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = await createPayment(shop);
    errorOf(await shop.publishable(PaymentMethodsDocument, { clientSecret: `${created.id}_secret_forged000000000000000` }), 'UNAUTHENTICATED');
    const stranger = await merchantWithSandbox(stack);
    errorOf(await stranger.publishable(PaymentMethodsDocument, { clientSecret: created.clientSecret }), 'NOT_FOUND');
  });
});

describe('saved cards', () => {
  it('a card saved on confirm pays a later payment of the same customer with its CVC only', async () => {
    const shop = await merchantWithSandbox(stack);
    const customerId = `cus_${shop.merchantId.slice(-8)}`;
    const first = await createPayment(shop, { customerId });
    const paid = dataOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: first.clientSecret, paymentMethodData: card('5555555555554444'), savePaymentMethod: true },
      }),
    ).confirmPayment;
    expect(paid.status).toBe('SUCCEEDED');
    const { savedPaymentMethods } = dataOf(await shop.secret(CustomerDocument, { id: customerId })).customer;
    expect(savedPaymentMethods).toMatchObject([{ customerId, connector: 'sandbox', brand: 'MASTERCARD', last4: '4444' }]);
    const saved = savedPaymentMethods[0]!;
    expect(saved.id).toMatch(/^pm_/);

    const second = await createPayment(shop, { customerId });
    const offered = dataOf(await shop.publishable(PaymentMethodsDocument, { clientSecret: second.clientSecret })).paymentMethods;
    expect(offered.savedPaymentMethods.map((method) => method.id)).toEqual([saved.id]);
    const again = dataOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: second.clientSecret, paymentMethodId: saved.id, cardCvc: '321' } }),
    ).confirmPayment;
    expect(again.status).toBe('SUCCEEDED');
    expect(again.activeAttempt).toMatchObject({ savedPaymentMethodId: saved.id, card: { last4: '4444', brand: 'MASTERCARD' } });

    // Another customer's payment cannot use it; a missing CVC is named.
    const other = await createPayment(shop, { customerId: 'cus_someone_else' });
    errorOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: other.clientSecret, paymentMethodId: saved.id, cardCvc: '321' } }),
      'NOT_FOUND',
    );
    const noCvc = errorOf(
      await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: other.clientSecret, paymentMethodId: saved.id } }),
      'INVALID_INPUT',
    );
    expect(noCvc.extensions?.field).toBe('cardCvc');

    const { rows } = await sql.query('SELECT t::text AS row FROM saved_payment_methods t WHERE merchant_id = $1', [shop.merchantId]);
    expect(rows).toHaveLength(1);
    expect(rows[0].row).not.toContain('5555555555554444');
    expect(rows[0].row).not.toMatch(/pm_[A-Za-z0-9]+.*pm_/); // only our id, the processor token is sealed
  });

  it.each([
    ['complete', 1],
    ['fail', 0],
  ] as const)('a 3DS card is saved only once the challenge is passed (%s → %i saved)', async (outcome, count) => {
    const shop = await merchantWithSandbox(stack);
    const customerId = `cus_3ds_${outcome}`;
    const created = await createPayment(shop, { customerId });
    const pending = dataOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: created.clientSecret, paymentMethodData: card('4000002500003155'), savePaymentMethod: true },
      }),
    ).confirmPayment;
    expect(pending.status).toBe('REQUIRES_CUSTOMER_ACTION');
    expect(dataOf(await shop.secret(CustomerDocument, { id: customerId })).customer.savedPaymentMethods).toEqual([]);
    await fetch(pending.nextAction!.redirectToUrl);
    await actOnPage(pending.nextAction!.redirectToUrl, outcome);
    expect(dataOf(await shop.secret(CustomerDocument, { id: customerId })).customer.savedPaymentMethods).toHaveLength(count);
  });

  it('a declined card is not saved; saving needs a customer', async () => {
    const shop = await merchantWithSandbox(stack);
    const created = await createPayment(shop, { customerId: 'cus_declined' });
    errorOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: created.clientSecret, paymentMethodData: card('4000000000000002'), savePaymentMethod: true },
      }),
      'PAYMENT_DECLINED',
    );
    expect(dataOf(await shop.secret(CustomerDocument, { id: 'cus_declined' })).customer.savedPaymentMethods).toEqual([]);
    const anonymous = await createPayment(shop);
    const error = errorOf(
      await shop.publishable(ConfirmPaymentDocument, {
        input: { clientSecret: anonymous.clientSecret, paymentMethodData: card('4242424242424242'), savePaymentMethod: true },
      }),
      'INVALID_INPUT',
    );
    expect(error.extensions?.field).toBe('savePaymentMethod');
    errorOf(await shop.secret(CustomerDocument, { id: 'cus_nobody' }), 'NOT_FOUND');
  });
});
