// Reads the ledger and writes it: the only writer of ledger_entries (docs/ledger.md). A movement is written
// as one ledger transaction: its merchants' rows and the processor side's opposite row, adding up to zero
// (which the deferred trigger of the ledger migration checks again when the database transaction commits).
import { newId } from '../../kernel/ids.ts';
import { Prisma, type Mode } from '../../generated/prisma/client.ts';
import type { Database } from '../../platform/db/client.ts';
import type { Share, ShareRole } from './allocation.ts';

type Executor = Database | Prisma.TransactionClient;

export type MovementType = 'capture' | 'refund' | 'dispute' | 'payout';

/** One movement of money: what each merchant is credited (negative: debited); the processor side takes the opposite. */
export interface Movement {
  type: MovementType;
  /** The payment, refund, dispute or payout that moved it. */
  sourceId: string;
  paymentId: string | null;
  mode: Mode;
  currency: string;
  /** The connector account the money moved through: the processor side's row names it. */
  connectorAccountId: string | null;
  credits: readonly Share[];
  /** When the credits may be paid out: now, or the settlement date a processor reported. */
  availableAt: Date;
  at: Date;
}

interface Row {
  id: string;
  merchantId: string | null;
  role: ShareRole | 'processor';
  amount: number;
}

function rowsOf(movement: Movement): Row[] {
  const rows: Row[] = movement.credits
    .filter((credit) => credit.amount !== 0)
    .map((credit) => ({ id: newId('ledgerEntry'), merchantId: credit.merchantId, role: credit.role, amount: credit.amount }));
  const processor = -rows.reduce((sum, row) => sum + row.amount, 0);
  if (processor !== 0) rows.push({ id: newId('ledgerEntry'), merchantId: null, role: 'processor', amount: processor });
  return rows;
}

/** The INSERT of `movement`'s rows where `condition` holds; null when it moves nothing. */
export function movementInsert(movement: Movement, condition: Prisma.Sql): Prisma.Sql | null {
  const rows = rowsOf(movement);
  if (rows.length === 0) return null;
  const transactionId = newId('ledgerTransaction');
  const values = rows.map(
    (row) => Prisma.sql`(${row.id}::text, ${transactionId}::text, ${movement.mode}::"Mode", ${movement.currency}::text, ${row.merchantId}::text,
      ${movement.connectorAccountId}::text, ${row.role}::text, ${movement.type}::text, ${movement.sourceId}::text, ${movement.paymentId}::text,
      ${row.amount}::bigint, ${row.role === 'processor' ? movement.at : movement.availableAt}::timestamptz, ${movement.at}::timestamptz)`,
  );
  return Prisma.sql`INSERT INTO ledger_entries (id, transaction_id, mode, currency, merchant_id, connector_account_id, role, type, source_id, payment_id, amount, available_at, created_at)
    SELECT * FROM (VALUES ${Prisma.join(values)}) AS ledger_row WHERE ${condition}`;
}

/** Writes `movement` in `tx` (the transaction of the change that moved the money). */
export async function recordMovement(tx: Prisma.TransactionClient, movement: Movement): Promise<void> {
  const insert = movementInsert(movement, Prisma.sql`TRUE`);
  if (insert !== null) await tx.$executeRaw(insert);
}

/** The key of a party of a payment: a merchant may hold two shares of one payment (its own and a split). */
export const partyKey = (share: { merchantId: string; role: string }) => `${share.merchantId}:${share.role}`;

/**
 * What each party has given back of a payment so far (refunds held and disputes' withdrawals, less what was
 * given back to it), by partyKey: its refund and dispute rows, negated. Read under the payment's row lock.
 */
export async function takenBackByParty(tx: Prisma.TransactionClient, paymentId: string): Promise<Map<string, number>> {
  const rows = await tx.$queryRaw<{ merchant_id: string; role: string; total: bigint }[]>`
    SELECT merchant_id, role, SUM(amount) AS total FROM ledger_entries
    WHERE payment_id = ${paymentId} AND merchant_id IS NOT NULL AND type IN ('refund', 'dispute') GROUP BY merchant_id, role`;
  return new Map(rows.map((row) => [partyKey({ merchantId: row.merchant_id, role: row.role }), -Number(row.total)]));
}

/** The latest date a payment's capture rows become available at; null when it has none. */
export async function captureSettlement(db: Executor, paymentId: string): Promise<Date | null> {
  const [row] = await db.$queryRaw<{ at: Date | null }[]>`
    SELECT MAX(available_at) AS at FROM ledger_entries WHERE payment_id = ${paymentId} AND type = 'capture' AND merchant_id IS NOT NULL`;
  return row?.at ?? null;
}

/** Whether refunds or disputes hold money taken back of the payment. */
export async function hasTakenBack(db: Database, paymentId: string): Promise<boolean> {
  const [row] = await db.$queryRaw<{ held: boolean }[]>`
    SELECT COALESCE(SUM(amount), 0) <> 0 AS held FROM ledger_entries WHERE payment_id = ${paymentId} AND merchant_id IS NULL AND type IN ('refund', 'dispute')`;
  return row?.held === true;
}

/** The sum of the merchants' rows a refund, dispute or payout has written (what it moved, signed). */
export async function sumOfSource(tx: Prisma.TransactionClient, sourceId: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ total: bigint | null }[]>`
    SELECT SUM(amount) AS total FROM ledger_entries WHERE source_id = ${sourceId} AND merchant_id IS NOT NULL`;
  return Number(row?.total ?? 0n);
}

/**
 * Holds the balance of `merchantId` in `currency` for the rest of `tx`: debits that must not overdraw it
 * (payouts, refunds) take turns, so each checks what the one before it wrote. Callers lock in merchant id
 * order, so two transactions never wait on each other's locks.
 */
export async function lockBalance(tx: Prisma.TransactionClient, merchantId: string, mode: Mode, currency: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`ledger:${merchantId}:${mode}:${currency}`}, 0))`;
}

export interface Balance {
  currency: string;
  available: number;
  pending: number;
}

/** A merchant's balance in each currency it has entries in, as of `now`. */
export async function balancesOf(executor: Executor, merchantId: string, mode: Mode, now: Date, currency?: string): Promise<Balance[]> {
  const rows = await executor.$queryRaw<{ currency: string; available: bigint; pending: bigint }[]>`
    SELECT currency, COALESCE(SUM(amount) FILTER (WHERE available_at <= ${now}), 0) AS available,
           COALESCE(SUM(amount) FILTER (WHERE available_at > ${now}), 0) AS pending
    FROM ledger_entries WHERE merchant_id = ${merchantId} AND mode = ${mode}::"Mode"
      ${currency === undefined ? Prisma.empty : Prisma.sql`AND currency = ${currency}`}
    GROUP BY currency ORDER BY currency`;
  return rows.map((row) => ({ currency: row.currency, available: Number(row.available), pending: Number(row.pending) }));
}
