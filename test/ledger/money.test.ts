// The ledger's money rules over random sequences against the running service (docs/ledger.md): a platform, two
// connected merchants, the sandbox; split payments with fees, partial refunds (some of which fail at the bank),
// disputes (opened by the sandbox, then won, cancelled, lost or left open) and payouts (some of which fail), in
// an order a seeded PRNG draws. A model of every balance, built from the payments' terms, says what each step
// must write; after each step the database, the GraphQL balances and the model must agree, every ledger
// transaction must add up to zero, and refusals (INSUFFICIENT_BALANCE) must be exactly the debits the model
// says a platform member's available balance cannot cover, and write nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  AcceptDisputeDocument,
  BalanceDocument,
  ChallengeDisputeDocument,
  ConnectedBalancesDocument,
  CreatePaymentDocument,
  CreatePayoutDocument,
  CreateRefundDocument,
  DisputesDocument,
  DisputeDocument,
  PayoutDocument,
  RefundDocument,
} from '../gql/graphql.ts';
import { capturedShares, captureStep, takeBackStep, type PaymentTerms, type Share } from '../../src/modules/ledger/allocation.ts';
import { dataOf, errorOf, type Execute } from '../support/graphql-client.ts';
import { actingClient, connectMerchant, createPlatform } from '../support/platforms.ts';
import { prng } from '../support/prng.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';
import { card } from '../support/webhooks.ts';

// A seed whose sequence goes through every outcome (the last check says which).
const SEED = Number(process.env.LEDGER_SEED ?? 10);
const STEPS = 40;
// In the order balances are listed (by currency).
const CURRENCIES = ['EUR', 'USD'] as const;
const REFUND_FAILS = '4000000000005126';

interface Member {
  id: string;
  client: Execute;
  sandboxKey: string;
}

interface PaymentState {
  id: string;
  terms: PaymentTerms;
  currency: string;
  owner: Member;
  captured: number;
  /** The parties of what was captured (capturedShares), in the order takeBackStep reads them. */
  held: Share[];
  /**
   * What each party (in `held`'s order) has given back so far: refunds held (not failed) and disputes'
   * withdrawals not given back, as the ledger shows them (LedgerService reads them per party).
   */
  given: number[];
  refunded: number;
  refundsFail: boolean;
  connectorTransactionId: string;
  /** Refunds are refused while a dispute may take the money (docs: a refund would return it twice). */
  disputed: boolean;
  /** One dispute per payment: the sandbox's chargeback is the customer's one. */
  everDisputed: boolean;
}

let stack: Stack;
let sql: pg.Client;
let platform: Member & { secretKey: string };
let sellers: Member[];
let members: Member[];
const payments: PaymentState[] = [];
/** What the model says each member holds: merchant → currency → amount. */
const model = new Map<string, Map<string, number>>();

const held = (merchantId: string, currency: string) => model.get(merchantId)?.get(currency) ?? 0;
function apply(credits: readonly Share[], currency: string, sign: 1 | -1) {
  for (const credit of credits) {
    const balances = model.get(credit.merchantId)!;
    balances.set(currency, (balances.get(currency) ?? 0) + sign * credit.amount);
  }
}

/**
 * What each party of `payment` gives back (positive) or is given back (negative) when `amount` is taken back
 * (negative: given back), as LedgerService.takeBack computes it: one party takes the whole step, several move
 * toward their shares of the new running total (takeBackStep).
 */
function takeBackOf(payment: PaymentState, amount: number): Share[] {
  if (payment.held.length === 1) return [{ ...payment.held[0]!, amount }];
  const total = payment.given.reduce((a, b) => a + b, 0) + amount;
  return takeBackStep(payment.terms, payment.captured, payment.given, total);
}

/** Marks, in the log, a payment whose steps take the one-party shortcut. */
const onlyOne = (payment: PaymentState) => (payment.held.length === 1 ? ' (one party)' : '');

/** `step` (from takeBackOf) written: the balances lose it, the parties have given it back. */
function takeBack(payment: PaymentState, step: readonly Share[]) {
  apply(step, payment.currency, -1);
  step.forEach((share, index) => (payment.given[index]! += share.amount));
}

async function sandboxHelper(member: Member, path: string, body: unknown = {}) {
  const response = await fetch(`${stack.sandboxUrl}/v1/test_helpers/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.sandboxKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

beforeAll(async () => {
  stack = await startStack({ sandboxRefundSettleMs: 200, sandboxPayoutSettleMs: 150, sandboxDisputeOpenMs: 200 });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
  const created = await createPlatform(stack.api, 'Ledger platform');
  const [first, second] = await Promise.all([connectMerchant(stack.api, created, 'Seller one'), connectMerchant(stack.api, created, 'Seller two')]);
  const withAccount = async (id: string, client: Execute): Promise<Member> => {
    const { key, account } = await addConnectorAccount(stack, { secret: client }, 'sandbox');
    // The sandbox's callbacks (disputes, refunds and payouts settling) come to this service.
    const registered = await fetch(`${stack.api.url}/account/${id}/webhooks/${account.id}`, {
      method: 'POST',
      headers: { 'api-key': created.secretKey, ...(id === created.merchantId ? {} : { 'X-Connected-Merchant-Id': id }) },
    });
    expect(registered.status).toBe(200);
    return { id, client, sandboxKey: key };
  };
  const own = await withAccount(created.merchantId, actingClient(stack.api, created.secretKey));
  platform = { ...own, secretKey: created.secretKey };
  sellers = [
    await withAccount(first.id, actingClient(stack.api, created.secretKey, first.id)),
    await withAccount(second.id, actingClient(stack.api, created.secretKey, second.id)),
  ];
  members = [platform, ...sellers];
  for (const member of members) model.set(member.id, new Map());
});

afterAll(async () => {
  await sql?.end();
  await stack?.close();
});

const ids = () => members.map((member) => member.id);

/** Rows every refused operation must leave as they were. */
async function written() {
  const { rows } = await sql.query<{ refunds: number; payouts: number; entries: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM refunds WHERE merchant_id = ANY($1)) AS refunds,
            (SELECT count(*)::int FROM payouts WHERE merchant_id = ANY($1)) AS payouts,
            (SELECT count(*)::int FROM ledger_entries WHERE merchant_id = ANY($1)) AS entries,
            (SELECT count(*)::int FROM events WHERE merchant_id = ANY($1)) AS events`,
    [ids()],
  );
  return rows[0]!;
}

/** Every check that must hold between steps. */
async function checkInvariants(step: string) {
  const ours = `SELECT transaction_id FROM ledger_entries WHERE merchant_id = ANY($1)`;
  // Each ledger transaction adds up to zero in each currency, has its processor side, and touches no one else.
  const unbalanced = await sql.query(
    `SELECT transaction_id, currency, SUM(amount)::int AS total FROM ledger_entries WHERE transaction_id IN (${ours}) GROUP BY 1, 2 HAVING SUM(amount) <> 0`,
    [ids()],
  );
  expect(unbalanced.rows, step).toEqual([]);
  const sides = await sql.query<{ processor: number; others: number; currencies: number }>(
    `SELECT count(*) FILTER (WHERE merchant_id IS NULL)::int AS processor, count(*) FILTER (WHERE merchant_id <> ALL($1))::int AS others,
            count(DISTINCT currency)::int AS currencies
     FROM ledger_entries WHERE transaction_id IN (${ours}) GROUP BY transaction_id HAVING count(*) FILTER (WHERE merchant_id IS NULL) <> 1
       OR count(*) FILTER (WHERE merchant_id <> ALL($1)) <> 0 OR count(DISTINCT currency) <> 1`,
    [ids()],
  );
  expect(sides.rows, step).toEqual([]);
  // Across the platform, its connected merchants and the processor side, each currency adds up to zero.
  const totals = await sql.query(
    `SELECT currency, SUM(amount)::int AS total FROM ledger_entries WHERE transaction_id IN (${ours}) GROUP BY currency HAVING SUM(amount) <> 0`,
    [ids()],
  );
  expect(totals.rows, step).toEqual([]);

  const { rows } = await sql.query<{ merchant_id: string; currency: string; available: string; disputed: string }>(
    `SELECT merchant_id, currency, SUM(amount) FILTER (WHERE available_at <= now()) AS available, COALESCE(SUM(amount) FILTER (WHERE type = 'dispute'), 0) AS disputed
     FROM ledger_entries WHERE merchant_id = ANY($1) GROUP BY 1, 2`,
    [ids()],
  );
  const connected = dataOf(await platform.client(ConnectedBalancesDocument, { first: 100 })).connectedMerchants.edges.map((edge) => edge.node);
  for (const member of members) {
    const own = rows.filter((row) => row.merchant_id === member.id);
    const expected = CURRENCIES.filter((currency) => model.get(member.id)!.has(currency)).map((currency) => ({
      currency,
      available: held(member.id, currency),
      pending: 0,
    }));
    // The model, the database and the API say the same.
    expect(
      own.map((row) => ({ currency: row.currency, available: Number(row.available), pending: 0 })).sort((a, b) => a.currency.localeCompare(b.currency)),
      step,
    ).toEqual(expected);
    expect(dataOf(await member.client(BalanceDocument)).merchant.balance, step).toEqual(expected);
    if (member !== platform) expect(connected.find((node) => node.id === member.id)?.balance, step).toEqual(expected);
    // Below zero only by what open or lost disputes withdrew: refunds and payouts never overdraw.
    for (const row of own) expect(Number(row.available) - Number(row.disputed), `${step}: ${member.id} ${row.currency}`).toBeGreaterThanOrEqual(0);
  }
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const between = (random: () => number, low: number, high: number) => low + Math.floor(random() * (high - low + 1));

async function pay(random: () => number, log: string[]) {
  const owner = pick(random, members);
  const currency = pick(random, CURRENCIES);
  const amount = between(random, 200, 5000);
  const applicationFeeAmount = random() < 0.8 ? between(random, 0, Math.floor(amount / 4)) : 0;
  const others = sellers.filter((seller) => seller !== owner && random() < 0.6);
  let rest = amount - applicationFeeAmount;
  const splits = others.map((seller, index) => {
    const share = index === others.length - 1 && random() < 0.5 ? rest : between(random, 1, Math.max(1, Math.floor(rest / 2)));
    rest -= share;
    return { merchantId: seller.id, amount: share };
  });
  // What the splits leave is the payment's merchant's; splits add up to amount less fee, so it joins as a split
  // to itself only when the owner is a seller (a platform's own payment keeps it through the last split instead).
  if (rest > 0 && splits.length > 0) {
    if (owner === platform) splits[splits.length - 1]!.amount += rest;
    else splits.push({ merchantId: owner.id, amount: rest });
  }
  const refundsFail = random() < 0.25;
  const input = {
    amount,
    currency,
    confirm: true,
    paymentMethodData: card(refundsFail ? REFUND_FAILS : '4242424242424242'),
    ...(applicationFeeAmount > 0 ? { applicationFeeAmount } : {}),
    ...(splits.length > 0 ? { splits } : {}),
  };
  const payment = dataOf(await owner.client(CreatePaymentDocument, { input })).createPayment;
  expect(payment.status).toBe('SUCCEEDED');
  const terms: PaymentTerms = { merchantId: owner.id, amount, surchargeAmount: 0, applicationFeeAmount, feeMerchantId: platform.id, splits };
  apply(captureStep(terms, 0, amount), currency, 1);
  const shares = capturedShares(terms, amount);
  payments.push({
    id: payment.id,
    terms,
    currency,
    owner,
    captured: amount,
    held: shares,
    given: shares.map(() => 0),
    refunded: 0,
    refundsFail,
    connectorTransactionId: payment.activeAttempt.connectorTransactionId!,
    disputed: false,
    everDisputed: false,
  });
  log.push(`pay ${owner.id} ${amount} ${currency} fee ${applicationFeeAmount} splits ${JSON.stringify(splits.map((split) => split.amount))}`);
}

async function refund(random: () => number, log: string[]) {
  const open = payments.filter((payment) => !payment.disputed && payment.refunded < payment.captured);
  if (open.length === 0) return pay(random, log);
  const payment = pick(random, open);
  const left = payment.captured - payment.refunded;
  const amount = random() < 0.3 ? left : between(random, 1, left);
  const step = takeBackOf(payment, amount);
  // Debits are refused per merchant: one may hold two shares (a platform's own payment keeps its fee).
  const debits = new Map<string, number>();
  for (const share of step) debits.set(share.merchantId, (debits.get(share.merchantId) ?? 0) + share.amount);
  const overdrawn = [...debits].some(([merchantId, debit]) => debit > 0 && held(merchantId, payment.currency) < debit);
  const before = await written();
  const result = await payment.owner.client(CreateRefundDocument, { input: { paymentId: payment.id, amount } });
  log.push(`refund ${payment.id}${onlyOne(payment)} ${amount} of ${left}${overdrawn ? ' (refused)' : ''}${payment.refundsFail ? ' (fails)' : ''}`);
  if (overdrawn) {
    expect(errorOf(result, 'INSUFFICIENT_BALANCE').extensions).toMatchObject({ field: 'amount', currency: payment.currency });
    expect(await written()).toEqual(before);
    return;
  }
  const created = dataOf(result).createRefund;
  takeBack(payment, step);
  for (const share of step) if (share.amount > 0) expect(held(share.merchantId, payment.currency)).toBeGreaterThanOrEqual(0);
  if (!payment.refundsFail) {
    expect(created.status).toBe('SUCCEEDED');
    payment.refunded += amount;
    if (payment.refunded === payment.captured) {
      // A full refund reverses the fee and every split exactly: each party's entries of the payment add up to zero.
      const { rows } = await sql.query(
        `SELECT merchant_id, SUM(amount)::int AS total FROM ledger_entries WHERE payment_id = $1 GROUP BY 1 HAVING SUM(amount) <> 0`,
        [payment.id],
      );
      expect(rows).toEqual([]);
    }
    return;
  }
  // The bank returns it: each party moves back toward its share of what is still taken back.
  await vi.waitFor(async () => expect(dataOf(await payment.owner.client(RefundDocument, { id: created.id })).refund?.status).toBe('FAILED'), {
    timeout: 8000,
    interval: 50,
  });
  takeBack(payment, takeBackOf(payment, -amount));
}

async function dispute(random: () => number, log: string[]) {
  const open = payments.filter((payment) => !payment.everDisputed && payment.refunded < payment.captured);
  if (open.length === 0) return pay(random, log);
  const payment = pick(random, open);
  payment.everDisputed = true;
  const amount = between(random, 1, payment.captured - payment.refunded);
  payment.disputed = true;
  await sandboxHelper(payment.owner, `payments/${payment.connectorTransactionId}/dispute`, { amount, reason: 'fraudulent' });
  const opened = await vi.waitFor(
    async () => {
      const [found] = dataOf(await payment.owner.client(DisputesDocument, { paymentId: payment.id })).disputes;
      expect(found).toBeDefined();
      return found!;
    },
    { timeout: 8000, interval: 50 },
  );
  // Withdrawn at opening, whatever the balances hold.
  takeBack(payment, takeBackOf(payment, amount));
  const ending = pick(random, ['open', 'win', 'cancel', 'accept', 'expire'] as const);
  log.push(`dispute ${payment.id}${onlyOne(payment)} ${amount} → ${ending}`);
  await checkInvariants(`dispute ${payment.id} opened`);
  if (ending === 'open') return;
  if (ending === 'accept') {
    dataOf(await payment.owner.client(AcceptDisputeDocument, { input: { disputeId: opened.id } }));
    return;
  }
  if (ending === 'win') {
    dataOf(await payment.owner.client(ChallengeDisputeDocument, { input: { disputeId: opened.id, evidence: { receipt: 'shipped' } } }));
  }
  await sandboxHelper(payment.owner, `disputes/${opened.connectorDisputeId}/${ending}`);
  const status = { win: 'WON', cancel: 'CANCELLED', expire: 'EXPIRED' }[ending];
  await vi.waitFor(async () => expect(dataOf(await payment.owner.client(DisputeDocument, { id: opened.id })).dispute?.status).toBe(status), {
    timeout: 8000,
    interval: 50,
  });
  if (ending === 'expire') return;
  // Won or cancelled: the withdrawn money comes back, and the payment may be refunded again.
  takeBack(payment, takeBackOf(payment, -amount));
  payment.disputed = false;
}

async function payout(random: () => number, log: string[]) {
  const member = pick(random, members);
  const currency = pick(random, CURRENCIES);
  const available = held(member.id, currency);
  const amount = random() < 0.2 && available > 0 ? available : between(random, 1, Math.max(1, Math.floor(available * 1.3) + 50));
  const fails = random() < 0.3;
  const destination = {
    card: { number: fails ? '4000000000000002' : '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, holderName: 'Ada' },
  };
  const before = await written();
  const result = await member.client(CreatePayoutDocument, { input: { amount, currency, destination } });
  log.push(`payout ${member.id} ${amount} ${currency} of ${available}${amount > available ? ' (refused)' : fails ? ' (fails)' : ''}`);
  if (amount > available) {
    expect(errorOf(result, 'INSUFFICIENT_BALANCE').extensions).toMatchObject({ field: 'amount', merchantId: member.id, currency, available, needed: amount });
    expect(await written()).toEqual(before);
    return;
  }
  const sent = dataOf(result).createPayout;
  apply([{ merchantId: member.id, role: 'merchant', amount }], currency, -1);
  await vi.waitFor(async () => expect(dataOf(await member.client(PayoutDocument, { id: sent.id })).payout?.status).toBe(fails ? 'FAILED' : 'SUCCEEDED'), {
    timeout: 8000,
    interval: 50,
  });
  if (fails) apply([{ merchantId: member.id, role: 'merchant', amount }], currency, 1);
}

describe('the ledger over a random sequence of payments, refunds, disputes and payouts', () => {
  it(`keeps every balance, transaction and refusal as the model says (seed ${SEED}, LEDGER_SEED to change it)`, { timeout: 120_000 }, async () => {
    const random = prng(SEED);
    const log: string[] = [];
    const operations = [pay, pay, refund, refund, dispute, payout, payout];
    try {
      for (let index = 0; index < 3; index += 1) await pay(random, log);
      await checkInvariants('after the first payments');
      for (let index = 0; index < STEPS; index += 1) {
        await pick(random, operations)(random, log);
        await checkInvariants(`step ${index}: ${log.at(-1)}`);
      }
    } catch (error) {
      throw new Error(`${(error as Error).message}\nsteps (seed ${SEED}):\n${log.join('\n')}`, { cause: error });
    }
    // The sequence went through each kind of outcome.
    const kinds = log.join('\n');
    for (const kind of [
      /^refund .*\(refused\)/m,
      /^refund .*\(fails\)/m,
      /^refund (?!.*\()/m,
      /^payout .*\(refused\)/m,
      /^payout .*\(fails\)/m,
      /^payout (?!.*\()/m,
      /→ (win|cancel)/,
      /→ (open|accept|expire)/,
      // A one-party payment's refund or withdrawal given back (no ledger read: the whole step is the merchant's).
      /^(refund \S+ \(one party\).*\(fails\)|dispute \S+ \(one party\).*→ (win|cancel))/m,
    ])
      expect(kinds).toMatch(kind);
  });
});
