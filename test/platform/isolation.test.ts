// Platforms and connected merchants (docs/platforms.md), the isolation matrix of issue 21: two platforms with two
// connected merchants each and a plain merchant; every operation below with every key and header combination.
// Exactly the allowed ones succeed, as the merchant they act for; the others are refused (FORBIDDEN, naming the
// header), do not find the object (NOT_FOUND) or break a rule of whose they are (INVALID_INPUT: fees and splits
// are a platform's, to its own connected merchants), and write nothing. Balances and ledger entries are read
// as the merchant acted for, and a platform reads its connected merchants' balances, never another's.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import {
  ActingMerchantDocument,
  BalanceDocument,
  ConnectedBalancesDocument,
  ConnectedMerchantsDocument,
  CreateApiKeyDocument,
  CreateConnectedMerchantDocument,
  CreateConnectorAccountDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  LedgerEntriesDocument,
  PaymentsDocument,
  PlatformConnectorAccountsDocument,
  PlatformPaymentDocument,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf, type GraphQLResult } from '../support/graphql-client.ts';
import { actingClient, CONNECTED_MERCHANT_HEADER as HEADER, connectMerchant, createPlatform as createPlatformWith } from '../support/platforms.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

let stack: Stack;
let sql: pg.Client;

const client = (key: string, connectedMerchantId?: string) => actingClient(stack.api, key, connectedMerchantId);
const createPlatform = (name: string) => createPlatformWith(stack.api, name);
const connect = (platform: { secretKey: string }, name: string) => connectMerchant(stack.api, platform, name);

/** A secret key for a connected merchant, issued by its platform acting for it. */
async function secretKeyFor(platform: { secretKey: string }, merchantId: string) {
  return dataOf(await client(platform.secretKey, merchantId)(CreateApiKeyDocument, { input: { name: 'own key', type: 'SECRET' } })).createApiKey.key;
}

const sandboxCredentials = () => ({ apiKey: `sk_sandbox_${randomBytes(12).toString('hex')}` });

let world: {
  p1: Awaited<ReturnType<typeof createPlatform>>;
  p2: Awaited<ReturnType<typeof createPlatform>>;
  c1a: string;
  c1b: string;
  c2a: string;
  plain: Awaited<ReturnType<typeof createMerchant>>;
  c1aKey: string;
  c1bKey: string;
  /** A succeeded payment of c1a's, created by p1 acting for it: the object the reads and refunds aim at. */
  c1aPaymentId: string;
};

beforeAll(async () => {
  stack = await startStack({ worker: false });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
  const [p1, p2, plain] = await Promise.all([createPlatform('Platform one'), createPlatform('Platform two'), createMerchant(stack.api)]);
  const [c1a, c1b, c2a] = await Promise.all([connect(p1, 'Seller 1a'), connect(p1, 'Seller 1b'), connect(p2, 'Seller 2a')]);
  await connect(p2, 'Seller 2b');
  const [c1aKey, c1bKey] = await Promise.all([secretKeyFor(p1, c1a.id), secretKeyFor(p1, c1b.id)]);
  const asC1a = client(p1.secretKey, c1a.id);
  dataOf(await asC1a(CreateConnectorAccountDocument, { input: { connectorName: 'sandbox', credentials: sandboxCredentials() } }));
  const payment = dataOf(
    await asC1a(CreatePaymentDocument, { input: { amount: 10_000, currency: 'USD', confirm: true, paymentMethodData: card() } }),
  ).createPayment;
  expect(payment.status).toBe('SUCCEEDED');
  // Money in every balance: p1's fee and c1b's split of a payment p1 takes for c1a (through c1a's account), and
  // p2's fee of one for c2a (through p2's account).
  const split = { amount: 2_000, currency: 'USD', confirm: true, paymentMethodData: card(), applicationFeeAmount: 200 };
  const splits = [
    { merchantId: c1b.id, amount: 800 },
    { merchantId: c1a.id, amount: 1_000 },
  ];
  expect(dataOf(await asC1a(CreatePaymentDocument, { input: { ...split, splits } })).createPayment.status).toBe('SUCCEEDED');
  dataOf(await client(p2.secretKey)(CreateConnectorAccountDocument, { input: { connectorName: 'sandbox', credentials: sandboxCredentials() } }));
  expect(dataOf(await client(p2.secretKey, c2a.id)(CreatePaymentDocument, { input: split })).createPayment.status).toBe('SUCCEEDED');
  world = { p1, p2, c1a: c1a.id, c1b: c1b.id, c2a: c2a.id, plain, c1aKey, c1bKey, c1aPaymentId: payment.id };
});

afterAll(async () => {
  await sql?.end();
  await stack?.close();
});

interface Combination {
  name: string;
  key: () => string;
  header?: () => string;
  /** The merchant the request acts as when it is allowed; undefined when the header must be refused. */
  actsAs?: () => string;
  /** The platform the records must name, when a platform acts for a connected merchant. */
  initiatedBy?: () => string;
}

const COMBINATIONS: Combination[] = [
  { name: "connected merchant's own key, no header", key: () => world.c1aKey, actsAs: () => world.c1a },
  {
    name: 'platform key + its own connected merchant',
    key: () => world.p1.secretKey,
    header: () => world.c1a,
    actsAs: () => world.c1a,
    initiatedBy: () => world.p1.merchantId,
  },
  { name: 'platform key, no header', key: () => world.p1.secretKey, actsAs: () => world.p1.merchantId },
  { name: 'plain merchant key, no header', key: () => world.plain.secretKey, actsAs: () => world.plain.merchantId },
  { name: "platform key + the other platform's merchant", key: () => world.p1.secretKey, header: () => world.c2a },
  { name: "other platform's key + this platform's merchant", key: () => world.p2.secretKey, header: () => world.c1a },
  { name: 'platform key + a plain merchant', key: () => world.p1.secretKey, header: () => world.plain.merchantId },
  { name: 'platform key + its own id', key: () => world.p1.secretKey, header: () => world.p1.merchantId },
  { name: 'platform key + an unknown merchant', key: () => world.p1.secretKey, header: () => 'mer_00000000000000000000000000' },
  { name: "connected merchant's key + its sibling", key: () => world.c1bKey, header: () => world.c1a },
  { name: "platform's publishable key + header", key: () => world.p1.publishableKey, header: () => world.c1a },
  { name: 'plain merchant key + header', key: () => world.plain.secretKey, header: () => world.c1a },
];

type Outcome = 'ok' | 'FORBIDDEN' | 'NOT_FOUND' | 'INVALID_INPUT';
type Client = ReturnType<typeof client>;

interface Operation {
  name: string;
  run: (as: Client) => Promise<GraphQLResult<unknown>>;
  /** What an allowed combination acting as `actor` (for the platform `initiatedBy`, if one acts for it) gets. */
  expected: (actor: string, initiatedBy: string | null) => Outcome;
  /** The field an INVALID_INPUT names. */
  field?: (actor: string, initiatedBy: string | null) => string;
  /** Checks a success: what it wrote or read belongs to `actor` (and names `initiatedBy`, for payments). */
  check: (data: never, actor: string, initiatedBy: string | null) => Promise<void>;
}

const isPlatform = (actor: string) => actor === world.p1.merchantId;
const onlyC1a = (actor: string): Outcome => (actor === world.c1a ? 'ok' : 'NOT_FOUND');

async function merchantOf(table: string, id: string): Promise<string> {
  const { rows } = await sql.query<{ merchant_id: string }>(`SELECT merchant_id FROM ${table} WHERE id = $1`, [id]);
  return rows[0]!.merchant_id;
}

async function idsOf(table: string, merchantId: string): Promise<Set<string>> {
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM ${table} WHERE merchant_id = $1`, [merchantId]);
  return new Set(rows.map((row) => row.id));
}

/** A merchant's balance in each currency, as the ledger's rows add up. */
async function balanceOf(merchantId: string) {
  const { rows } = await sql.query<{ currency: string; available: number }>(
    'SELECT currency, SUM(amount)::int AS available FROM ledger_entries WHERE merchant_id = $1 GROUP BY currency ORDER BY currency',
    [merchantId],
  );
  return rows.map((row) => ({ ...row, pending: 0 }));
}

/** Fees and splits are a platform's: its own key, or acting for its connected merchant. */
const speaksForPlatform = (actor: string, initiatedBy: string | null): Outcome => (isPlatform(actor) || initiatedBy !== null ? 'ok' : 'INVALID_INPUT');

const OPERATIONS: Operation[] = [
  {
    name: 'createPayment',
    run: (as) => as(CreatePaymentDocument, { input: { amount: 1_500, currency: 'USD' } }),
    expected: () => 'ok',
    check: async (data: { createPayment: { id: string } }, actor, initiatedBy) => {
      const { rows } = await sql.query('SELECT merchant_id, initiated_by_platform_id FROM payment_intents WHERE id = $1', [data.createPayment.id]);
      expect(rows[0]).toEqual({ merchant_id: actor, initiated_by_platform_id: initiatedBy });
    },
  },
  {
    name: 'payment read',
    run: (as) => as(PlatformPaymentDocument, { id: world.c1aPaymentId }),
    expected: onlyC1a,
    check: async (data: { payment: { id: string; initiatedByPlatformId: string | null } }) => {
      expect(data.payment).toMatchObject({ id: world.c1aPaymentId, initiatedByPlatformId: world.p1.merchantId });
    },
  },
  {
    name: 'payments list',
    run: (as) => as(PaymentsDocument, { first: 100 }),
    expected: () => 'ok',
    check: async (data: { payments: { edges: { node: { id: string } }[] } }, actor) => {
      const listed = data.payments.edges.map((edge) => edge.node.id);
      const own = await idsOf('payment_intents', actor);
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.filter((id) => !own.has(id))).toEqual([]);
      if (actor !== world.c1a) expect(listed).not.toContain(world.c1aPaymentId);
    },
  },
  {
    name: 'createRefund',
    run: (as) => as(CreateRefundDocument, { input: { paymentId: world.c1aPaymentId, amount: 100 } }),
    expected: onlyC1a,
    check: async (data: { createRefund: { id: string } }, actor) => expect(await merchantOf('refunds', data.createRefund.id)).toBe(actor),
  },
  {
    name: 'createConnectorAccount',
    run: (as) => as(CreateConnectorAccountDocument, { input: { connectorName: 'sandbox', credentials: sandboxCredentials() } }),
    expected: () => 'ok',
    check: async (data: { createConnectorAccount: { id: string } }, actor) => {
      expect(await merchantOf('connector_accounts', data.createConnectorAccount.id)).toBe(actor);
    },
  },
  {
    name: 'connectorAccounts',
    run: (as) => as(PlatformConnectorAccountsDocument),
    expected: () => 'ok',
    check: async (data: { connectorAccounts: { id: string }[] }, actor) => {
      const own = await idsOf('connector_accounts', actor);
      expect(data.connectorAccounts.length).toBeGreaterThan(0);
      expect(data.connectorAccounts.filter((account) => !own.has(account.id))).toEqual([]);
    },
  },
  {
    name: 'createApiKey',
    run: (as) => as(CreateApiKeyDocument, { input: { name: 'matrix key', type: 'SECRET' } }),
    expected: () => 'ok',
    check: async (data: { createApiKey: { apiKey: { id: string } } }, actor) => expect(await merchantOf('api_keys', data.createApiKey.apiKey.id)).toBe(actor),
  },
  {
    name: 'merchant',
    run: (as) => as(ActingMerchantDocument),
    expected: () => 'ok',
    check: async (data: { merchant: { id: string } }, actor) => expect(data.merchant.id).toBe(actor),
  },
  {
    name: 'connectedMerchants',
    run: (as) => as(ConnectedMerchantsDocument, { first: 100 }),
    expected: (actor) => (isPlatform(actor) ? 'ok' : 'FORBIDDEN'),
    check: async (data: { connectedMerchants: { edges: { node: { id: string; platformMerchantId: string | null } }[] } }) => {
      const listed = data.connectedMerchants.edges.map((edge) => edge.node);
      expect(listed.map((node) => node.id)).toEqual(expect.arrayContaining([world.c1a, world.c1b]));
      expect(listed.filter((node) => node.platformMerchantId !== world.p1.merchantId)).toEqual([]);
    },
  },
  {
    name: 'createConnectedMerchant',
    run: (as) => as(CreateConnectedMerchantDocument, { input: { name: 'Seller from the matrix' } }),
    expected: (actor) => (isPlatform(actor) ? 'ok' : 'FORBIDDEN'),
    check: async (data: {
      createConnectedMerchant: { id: string; platformMerchantId: string | null; apiKeys: unknown[]; businessProfiles: { isDefault: boolean }[] };
    }) => {
      expect(data.createConnectedMerchant).toMatchObject({ platformMerchantId: world.p1.merchantId, apiKeys: [], businessProfiles: [{ isDefault: true }] });
    },
  },
  {
    name: 'balance',
    run: (as) => as(BalanceDocument),
    expected: () => 'ok',
    check: async (data: { merchant: { id: string; balance: unknown[] } }, actor) => {
      expect(data.merchant.id).toBe(actor);
      expect(data.merchant.balance).toEqual(await balanceOf(actor));
    },
  },
  {
    name: 'ledgerEntries',
    run: (as) => as(LedgerEntriesDocument, { first: 100 }),
    expected: () => 'ok',
    check: async (data: { merchant: { ledgerEntries: { edges: { node: { id: string } }[] } } }, actor) => {
      const listed = data.merchant.ledgerEntries.edges.map((edge) => edge.node.id).sort();
      expect(listed).toEqual([...(await idsOf('ledger_entries', actor))].sort());
    },
  },
  {
    name: 'connectedMerchants { balance }',
    run: (as) => as(ConnectedBalancesDocument, { first: 100 }),
    expected: (actor) => (isPlatform(actor) ? 'ok' : 'FORBIDDEN'),
    check: async (data: { connectedMerchants: { edges: { node: { id: string; balance: unknown[] } }[] } }) => {
      const listed = data.connectedMerchants.edges.map((edge) => edge.node);
      expect(listed.map((node) => node.id)).toEqual(expect.arrayContaining([world.c1a, world.c1b]));
      expect(listed.map((node) => node.id)).not.toContain(world.c2a);
      for (const node of listed) expect(node.balance).toEqual(await balanceOf(node.id));
      expect(listed.find((node) => node.id === world.c1b)?.balance).toEqual([{ currency: 'USD', available: 800, pending: 0 }]);
    },
  },
  {
    name: 'createPayment with a fee and a split to its own connected merchant',
    run: (as) =>
      as(CreatePaymentDocument, { input: { amount: 1_500, currency: 'USD', applicationFeeAmount: 100, splits: [{ merchantId: world.c1b, amount: 1_400 }] } }),
    expected: speaksForPlatform,
    field: () => 'splits',
    check: async (data: { createPayment: { id: string } }, actor, initiatedBy) => {
      const { rows } = await sql.query('SELECT merchant_id, initiated_by_platform_id, application_fee_amount, splits FROM payment_intents WHERE id = $1', [
        data.createPayment.id,
      ]);
      expect(rows[0]).toEqual({
        merchant_id: actor,
        initiated_by_platform_id: initiatedBy,
        application_fee_amount: 100,
        splits: [{ merchantId: world.c1b, amount: 1_400 }],
      });
    },
  },
  {
    name: 'createPayment with a split to the other platform’s merchant',
    run: (as) => as(CreatePaymentDocument, { input: { amount: 1_500, currency: 'USD', splits: [{ merchantId: world.c2a, amount: 1_500 }] } }),
    expected: () => 'INVALID_INPUT',
    // The same answer as for any merchant outside the platform; a non-platform may not split at all.
    field: (actor, initiatedBy) => (speaksForPlatform(actor, initiatedBy) === 'ok' ? 'splits.0.merchantId' : 'splits'),
    check: async () => {
      throw new Error('a split across platforms must never be accepted');
    },
  },
];

/** Rows of every table these operations write, for every merchant of this file (the platforms' new connected ones included). */
async function rowCounts(): Promise<Record<string, number>> {
  const ours = [world.p1.merchantId, world.p2.merchantId, world.plain.merchantId];
  const merchants = `SELECT id FROM merchant_accounts WHERE id = ANY($1) OR platform_merchant_id = ANY($1)`;
  const counts: Record<string, number> = {};
  for (const table of ['payment_intents', 'refunds', 'connector_accounts', 'api_keys', 'business_profiles', 'ledger_entries']) {
    const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE merchant_id IN (${merchants})`, [ours]);
    counts[table] = rows[0]!.n;
  }
  const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${merchants}) AS ours`, [ours]);
  counts.merchant_accounts = rows[0]!.n;
  return counts;
}

describe('the isolation matrix: every operation with every key and header combination', () => {
  const cases = COMBINATIONS.flatMap((combination) => OPERATIONS.map((operation) => ({ combination, operation })));
  it.each(cases.map((entry) => [`${entry.operation.name} with ${entry.combination.name}`, entry] as const))('%s', async (_name, { combination, operation }) => {
    const actor = combination.actsAs?.();
    const expected: Outcome = actor === undefined ? 'FORBIDDEN' : operation.expected(actor, combination.initiatedBy?.() ?? null);
    const before = await rowCounts();
    const result = await operation.run(client(combination.key(), combination.header?.()));
    if (expected === 'ok') {
      await operation.check(dataOf(result) as never, actor!, combination.initiatedBy?.() ?? null);
      return;
    }
    const error = errorOf(result, expected);
    if (actor === undefined) expect(error.message).toContain(HEADER);
    if (expected === 'INVALID_INPUT') expect(error.extensions?.field).toBe(operation.field!(actor!, combination.initiatedBy?.() ?? null));
    expect(await rowCounts()).toEqual(before);
  });
});

describe('merchant_accounts', () => {
  it('refuses a platform that is itself connected (the CHECK), whoever writes the row', async () => {
    await expect(sql.query('UPDATE merchant_accounts SET is_platform = true WHERE id = $1', [world.c1a])).rejects.toThrow(
      /merchant_accounts_platform_not_connected/,
    );
  });
});
