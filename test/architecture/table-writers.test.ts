// Each table has one writer (docs/architecture.md): only the payments store writes payment_intents and
// payment_attempts, so the version bump every change of a payment needs is in one place; only the routing store
// writes routing_algorithms, so one active algorithm per profile and mode is kept in one place; only the ledger
// store writes ledger_entries, so every movement is written as one balanced transaction; only the team store writes
// audit_log, so what a row may hold is decided in one place. This scans the
// product's source for writes of those tables, through raw SQL or the Prisma client.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
const OWNER = 'modules/payments/store.ts';
const RAW_SQL_WRITE = /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+payment_(intents|attempts)\b/i;
const PRISMA_WRITE = /\.payment(Intent|Attempt)\.(create|createMany|update|updateMany|upsert|delete|deleteMany)\b/;

/** The tables with one writer besides the payment tables: its owner, how a write of it looks, and a fixture proving the scan. */
const SINGLE_WRITER_TABLES = [
  {
    table: 'routing_algorithms',
    owner: 'modules/routing/store.ts',
    rawSql: /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+routing_algorithms\b/i,
    prisma: /\.routingAlgorithm\.(create|createMany|update|updateMany|upsert|delete|deleteMany)\b/,
    ownerWrite: 'await tx.routingAlgorithm.create({ data })',
    otherWrite: ['modules/merchants/profile-service.ts', 'await db.routingAlgorithm.updateMany({ where: { profileId } })'],
    read: ['modules/routing/service.ts', 'await db.routingAlgorithm.findMany({ where: { profileId } })'],
  },
  {
    table: 'ledger_entries',
    owner: 'modules/ledger/store.ts',
    rawSql: /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+ledger_entries\b/i,
    prisma: /\.ledgerEntry\.(create|createMany|update|updateMany|upsert|delete|deleteMany)\b/,
    ownerWrite: 'INSERT INTO ledger_entries (id) SELECT 1',
    otherWrite: ['modules/payouts/service.ts', 'await tx.ledgerEntry.create({ data })'],
    read: ['modules/ledger/service.ts', 'await db.ledgerEntry.findMany({ where: { merchantId } })'],
  },
  {
    table: 'audit_log',
    owner: 'modules/team/store.ts',
    rawSql: /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+audit_log\b/i,
    prisma: /\.auditLogEntry\.(create|createMany|update|updateMany|upsert|delete|deleteMany)\b/,
    ownerWrite: 'await this.db.auditLogEntry.create({ data })',
    otherWrite: ['api/session-permissions.ts', 'await db.auditLogEntry.create({ data })'],
    read: ['modules/team/service.ts', 'await db.auditLogEntry.findMany({ where: { merchantId } })'],
  },
] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function writersOf(files: Record<string, string>, rawSql = RAW_SQL_WRITE, prisma = PRISMA_WRITE): string[] {
  return Object.entries(files)
    .filter(([, source]) => rawSql.test(source) || prisma.test(source))
    .map(([file]) => file)
    .sort();
}

const productFiles = () => Object.fromEntries(sourceFiles(SRC).map((file) => [path.relative(SRC, file), readFileSync(file, 'utf8')]));

describe('the payment tables', () => {
  it('are written by the payments store alone', () => {
    expect(writersOf(productFiles())).toEqual([OWNER]);
  });

  it('count a raw-SQL or Prisma write anywhere else as a second writer', () => {
    expect(
      writersOf({
        [OWNER]: 'UPDATE payment_intents SET version = version + 1',
        'modules/refunds/service.ts': 'await tx.$executeRaw`update payment_intents set amount_refunded = 0`',
        'modules/disputes/service.ts': 'await db.paymentAttempt.update({ where: { id } })',
        'modules/events/service.ts': 'SELECT * FROM payment_intents WHERE id = $1 FOR UPDATE',
      }),
    ).toEqual(['modules/disputes/service.ts', 'modules/refunds/service.ts', OWNER].sort());
  });
});

describe.each(SINGLE_WRITER_TABLES)('$table', ({ owner, rawSql, prisma, ownerWrite, otherWrite, read }) => {
  it('is written by its store alone', () => {
    expect(writersOf(productFiles(), rawSql, prisma)).toEqual([owner]);
  });

  it('counts a write of it anywhere else as a second writer', () => {
    const files = { [owner]: ownerWrite, [otherWrite[0]]: otherWrite[1], [read[0]]: read[1] };
    expect(writersOf(files, rawSql, prisma)).toEqual([owner, otherWrite[0]].sort());
  });
});
