// Finding payments (docs/api.md, "Finding payments"): the payments query's search and filters against one
// merchant's payments, beside another merchant's and the live mode's that match every search and must never show.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateApiKeyDocument,
  CreatePaymentDocument,
  SearchPaymentsDocument,
  type CreatePaymentInput,
  type SearchPaymentsQuery,
  type SearchPaymentsQueryVariables,
} from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

const MASTERCARD = '5555555555554444';
const DEBIT = { bankDebit: { accountHolderName: 'Ada Lovelace', iban: 'DE89370400440532013000' } };

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let live: Awaited<ReturnType<typeof merchantWithSandbox>>['secret'];
/** The shop's payments by name, created in this order (so newest first is the reverse). */
const ids: Record<string, string> = {};
const createdAt: Record<string, string> = {};
let otherMerchantsPayment: string;
let livePayment: string;

async function pay(execute: typeof shop.secret, input: CreatePaymentInput) {
  return dataOf(await execute(CreatePaymentDocument, { input })).createPayment;
}

beforeAll(async () => {
  stack = await startStack();
  shop = await merchantWithSandbox(stack);
  await addConnectorAccount(stack, shop, 'fauxpay');
  const fixtures: [string, CreatePaymentInput][] = [
    ['adaUsd', { amount: 1250, currency: 'USD', email: 'Ada@Example.com', confirm: true, paymentMethodData: card() }],
    ['bobFauxpay', { amount: 1250, currency: 'USD', email: 'bob@example.com', confirm: true, paymentMethodData: card(MASTERCARD), connectors: ['fauxpay'] }],
    ['adaYen', { amount: 500, currency: 'JPY', email: 'ada@example.com', confirm: true, paymentMethodData: card() }],
    ['carolDebit', { amount: 1250, currency: 'EUR', email: 'carol@example.com', confirm: true, paymentMethodData: DEBIT }],
    ['unpaid', { amount: 1250, currency: 'USD' }],
    ['adaBig', { amount: 125000, currency: 'USD', email: 'ada@example.com', confirm: true, paymentMethodData: card() }],
  ];
  for (const [name, input] of fixtures) {
    const payment = await pay(shop.secret, input);
    ids[name] = payment.id;
    createdAt[name] = (await found({ search: payment.id }))[0]!.createdAt as string;
  }
  // Matches the shop's searches by email, last four and amount, but is another merchant's, then the live mode's.
  const twin: CreatePaymentInput = { amount: 1250, currency: 'USD', email: 'ada@example.com', confirm: true, paymentMethodData: card() };
  const other = await merchantWithSandbox(stack);
  otherMerchantsPayment = (await pay(other.secret, twin)).id;
  const { key } = dataOf(
    await stack.api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: shop.merchantId } }),
  ).createApiKey;
  live = stack.api.as(key);
  await addConnectorAccount(stack, { secret: live }, 'sandbox');
  livePayment = (await pay(live, twin)).id;
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const found = async (variables: SearchPaymentsQueryVariables, execute = shop.secret) =>
  dataOf(await execute(SearchPaymentsDocument, { first: 100, ...variables })).payments.edges.map((edge) => edge.node);

/** The names of the shop's payments a query finds, newest first. */
const namesFound = async (variables: SearchPaymentsQueryVariables) => {
  const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  return (await found(variables)).map((node) => byId.get(node.id) ?? node.id);
};

describe('search', () => {
  it.each([
    ['a payment id', () => ({ search: ids.bobFauxpay }), ['bobFauxpay']],
    ['a payment id with spaces around it', () => ({ search: ` ${ids.adaYen} ` }), ['adaYen']],
    ['another merchant’s payment id', () => ({ search: otherMerchantsPayment }), []],
    ['a live payment’s id with the test key', () => ({ search: livePayment }), []],
    ['an email in another case', () => ({ search: 'ADA@example.COM' }), ['adaBig', 'adaYen', 'adaUsd']],
    ['an email nobody paid with', () => ({ search: 'eve@example.com' }), []],
    ['a visa’s last four', () => ({ search: '4242' }), ['adaBig', 'adaYen', 'adaUsd']],
    ['a mastercard’s last four', () => ({ search: '4444' }), ['bobFauxpay']],
    ['an amount in major units (any two-decimal currency)', () => ({ search: '12.50' }), ['unpaid', 'carolDebit', 'bobFauxpay', 'adaUsd']],
    ['an amount with a trailing zero less', () => ({ search: '12.5' }), ['unpaid', 'carolDebit', 'bobFauxpay', 'adaUsd']],
    ['an amount in a zero-decimal currency', () => ({ search: '500.00' }), ['adaYen']],
    ['an amount above a thousand', () => ({ search: '1250.00' }), ['adaBig']],
    ['an amount of no payment', () => ({ search: '12.51' }), []],
  ] as const)('finds by %s', async (_kind, variables, expected) => {
    expect(await namesFound(variables())).toEqual(expected);
  });

  it('shows what the dashboard lists: email, connector, method, card', async () => {
    const [bob] = await found({ search: ids.bobFauxpay });
    expect(bob).toMatchObject({
      email: 'bob@example.com',
      connector: 'fauxpay',
      activeAttempt: { paymentMethodType: 'card', card: { brand: 'MASTERCARD', last4: '4444' } },
    });
    const [ada] = await found({ search: ids.adaUsd });
    expect(ada!.email).toBe('Ada@Example.com');
  });

  it('finds the live payment with the live key only', async () => {
    expect((await found({ search: 'ada@example.com' }, live)).map((node) => node.id)).toEqual([livePayment]);
  });
});

describe('filters', () => {
  it.each([
    ['connector', () => ({ connector: 'fauxpay' }), ['bobFauxpay']],
    ['payment method', () => ({ paymentMethod: 'bank_debit' }), ['carolDebit']],
    ['currency (any case)', () => ({ currency: 'jpy' }), ['adaYen']],
    ['status', () => ({ status: 'REQUIRES_PAYMENT_METHOD' as const }), ['unpaid']],
    ['search and currency', () => ({ search: '12.50', currency: 'EUR' }), ['carolDebit']],
    ['last four and currency', () => ({ search: '4242', currency: 'USD' }), ['adaBig', 'adaUsd']],
    ['amount, connector and method', () => ({ search: '12.50', connector: 'sandbox', paymentMethod: 'card' }), ['adaUsd']],
    ['amount and status', () => ({ search: '12.50', status: 'SUCCEEDED' as const }), ['bobFauxpay', 'adaUsd']],
    ['email and created before', () => ({ search: 'ada@example.com', createdBefore: createdAt.adaYen }), ['adaUsd']],
    ['email and created after', () => ({ search: 'ada@example.com', createdAfter: createdAt.adaYen }), ['adaBig', 'adaYen']],
    ['filters no payment meets together', () => ({ connector: 'fauxpay', currency: 'JPY' }), []],
  ] as const)('by %s', async (_filter, variables, expected) => {
    expect(await namesFound(variables())).toEqual(expected);
  });
});

describe('pagination', () => {
  it.each([
    ['an amount', { search: '12.50' }, ['unpaid', 'carolDebit', 'bobFauxpay', 'adaUsd']],
    ['a currency', { currency: 'USD' }, ['adaBig', 'unpaid', 'bobFauxpay', 'adaUsd']],
    ['an email and a method', { search: 'ada@example.com', paymentMethod: 'card' }, ['adaBig', 'adaYen', 'adaUsd']],
  ] as const)('pages through payments filtered by %s two at a time', async (_filter, variables, expected) => {
    const names: string[] = [];
    const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
    let after: string | null = null;
    for (;;) {
      const page: SearchPaymentsQuery['payments'] = dataOf(await shop.secret(SearchPaymentsDocument, { ...variables, first: 2, after })).payments;
      expect(page.edges.length).toBeLessThanOrEqual(2);
      names.push(...page.edges.map((edge) => byId.get(edge.node.id) ?? edge.node.id));
      expect(names.length, 'the pages end').toBeLessThan(10);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(names).toEqual(expected);
  });
});

describe('bad input', () => {
  it.each([
    ['search', { search: 'x'.repeat(201) }, 'must be at most 200 characters'],
    ['search', { search: '12' }, 'must be a payment id (pay_…), an email address, a card’s last four digits, or an amount with a decimal point such as 12.50'],
    ['search', { search: '12,50' }, 'an amount with a decimal point'],
    ['currency', { currency: 'XYZ' }, 'must be an ISO 4217 currency code'],
    ['connector', { connector: 'nopay' }, 'must be a known connector name'],
    ['paymentMethod', { paymentMethod: 'cash' }, 'must be one of card, bank_debit'],
    ['first', { first: 0 }, 'must be at least 1'],
    ['first', { first: 101 }, 'must be at most 100'],
  ] as const)('%s %j is refused', async (field, variables, rule) => {
    const error = errorOf(await shop.secret(SearchPaymentsDocument, variables), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe(field);
    expect(error.message).toContain(rule);
  });

  it('a search of 200 characters is read', async () => {
    expect(await found({ search: `${'a'.repeat(188)}@example.com` })).toEqual([]);
  });

  it('createPayment refuses an email that is not one', async () => {
    const error = errorOf(await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'USD', email: 'ada at example.com' } }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('email');
  });
});
