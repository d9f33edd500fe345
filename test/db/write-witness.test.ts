// The write witness (src/platform/db/write-witness.ts): what a keyed mutation's answer being kept rests on. Every
// statement on the pool, Prisma's and the prepared ones, tells the witness current where it was sent whether it
// wrote; a read, a rolled-back transaction and a write the server refused do not count, and one request's
// statements never count for another's, even when the pool hands a connection over from one to the other.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/platform/db/client.ts';
import { Prisma } from '../../src/generated/prisma/client.ts';
import { failedOnItsRows, mayHaveCommitted, statementKind, WriteWitness, witnessing, witnessWrites } from '../../src/platform/db/write-witness.ts';

// One connection: a second checkout waits for the first. The table is in a schema of this file's own (a
// failed statement through pool.query closes its connection, so a temporary table would not last).
const db = createDatabase(inject('databaseUrl'), 1);
beforeAll(async () => {
  await db.$executeRawUnsafe('CREATE SCHEMA IF NOT EXISTS write_witness');
  await db.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS write_witness.witnessed (id text PRIMARY KEY)');
});
afterAll(async () => {
  await db.$executeRawUnsafe('DROP SCHEMA write_witness CASCADE');
  await db.$disconnect();
});

/**
 * `work`, awaited inside the witness: Prisma's queries start only when awaited (PrismaPromise), as a resolver's
 * are, inside the request's execution.
 */
const witnessed = (witness: WriteWitness, work: () => PromiseLike<unknown>) => witnessing(witness, async () => void (await work()));

/** Whether `work` wrote, as its witness says once it is done. */
async function wrote(work: () => PromiseLike<unknown>): Promise<boolean> {
  const witness = new WriteWitness();
  await witnessed(witness, work).catch(() => undefined);
  return witness.wrote;
}

let rows = 0;
const run = randomUUID();
const row = () => `${run}-${(rows += 1)}`;

describe('statementKind', () => {
  it.each([
    ['SELECT * FROM payment_intents WHERE id = $1 FOR UPDATE', 'read'],
    ['  \n  select 1', 'read'],
    ['/* a comment */ -- another\n SELECT 1', 'read'],
    ['WITH last AS (SELECT 1) SELECT * FROM last', 'read'],
    ['WITH claim AS (INSERT INTO idempotency_records VALUES (1)) INSERT INTO payment_intents VALUES (2)', 'write'],
    ['WITH moved AS (SELECT 1) UPDATE events SET status = 1', 'write'],
    ['INSERT INTO refunds VALUES ($1)', 'counted write'],
    ['update refunds set status = $1', 'counted write'],
    ['DELETE FROM idempotency_records', 'counted write'],
    ['DO $$ BEGIN END $$', 'write'],
    ['BEGIN', 'begin'],
    ['START TRANSACTION', 'begin'],
    ['COMMIT', 'commit'],
    ['ROLLBACK', 'rollback'],
    ['ROLLBACK TO SAVEPOINT s1', 'read'],
    ['SAVEPOINT s1', 'read'],
    ['SET TRANSACTION ISOLATION LEVEL SERIALIZABLE', 'read'],
    ['', 'write'],
  ])('%j is a %s', (text, kind) => {
    expect(statementKind(text)).toBe(kind);
  });
});

describe('a failed statement', () => {
  // What a keyed request's claim becomes (uncertain: its answer is kept whatever happened) and whether a batch's
  // items run again one by one (only where the failure was some rows' and nothing committed).
  it.each([
    ['a unique key taken (23505)', false, true, { code: '23505' }],
    ['a value refused (22P02)', false, true, { code: '22P02' }],
    ['a deadlock (40P01)', false, true, { code: '40P01' }],
    ['a serialization failure (40001)', false, true, { code: '40001' }],
    ['statement_completion_unknown (40003)', true, false, { code: '40003' }],
    ['an integrity constraint failed at commit (40002)', false, true, { code: '40002' }],
    ['the server shutting down (57P01)', true, false, { code: '57P01' }],
    ['the server crashing (57P02)', true, false, { code: '57P02' }],
    ['a connection refused while the server starts (57P03)', false, false, { code: '57P03' }],
    ['a query cancelled (57014)', false, false, { code: '57014' }],
    ['a connection refused', false, false, { code: 'ECONNREFUSED' }],
    ['a host not found', false, false, { code: 'ENOTFOUND' }],
    ['no connection from the pool in time', false, false, new Error('timeout exceeded when trying to connect')],
    ['a connection lost mid-statement', true, false, new Error('Connection terminated unexpectedly')],
  ])('%s: may have committed %s, failed on its rows %s', (_what, committed, onItsRows, error) => {
    expect(mayHaveCommitted(error)).toBe(committed);
    expect(failedOnItsRows(error)).toBe(onItsRows);
  });
});

describe('a witness', () => {
  it('sees a write outside a transaction, through Prisma and prepared, and no read', async () => {
    expect(await wrote(() => db.$queryRaw`SELECT 1`)).toBe(false);
    expect(await wrote(() => db.prepared.run('SELECT count(*) FROM write_witness.witnessed', []))).toBe(false);
    expect(await wrote(() => db.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${row()})`)).toBe(true);
    expect(await wrote(() => db.prepared.run('INSERT INTO write_witness.witnessed VALUES ($1)', [row()]))).toBe(true);
  });

  it('sees a transaction with a write once it commits, not one rolled back or one that only read', async () => {
    expect(await wrote(() => db.$transaction(async (tx) => tx.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${row()})`))).toBe(true);
    expect(await wrote(() => db.$transaction(async (tx) => tx.$queryRaw`SELECT * FROM write_witness.witnessed FOR UPDATE`))).toBe(false);
    const rolledBack = () =>
      db.$transaction(async (tx) => {
        await tx.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${row()})`;
        throw new Error('refused after writing, inside the transaction');
      });
    expect(await wrote(rolledBack)).toBe(false);
    expect(await wrote(() => db.prepared.transaction((connection) => connection.query('INSERT INTO write_witness.witnessed VALUES ($1)', [row()])))).toBe(true);
  });

  it('does not count a write the server refused, nor the COMMIT of a transaction that failed (answered ROLLBACK)', async () => {
    const taken = row();
    await db.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${taken})`;
    expect(await wrote(() => db.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${taken})`)).toBe(false);
    // The insert fails inside the transaction; PostgreSQL answers the COMMIT after it with ROLLBACK.
    const commitAfterFailure = () =>
      db.prepared.transaction((connection) => connection.query('INSERT INTO write_witness.witnessed VALUES ($1)', [taken]).catch(() => undefined));
    expect(await wrote(commitAfterFailure)).toBe(false);
  });

  it('does not count a write that changed no row, alone or in a transaction, nor one its sender reads as unchanged', async () => {
    const none = `${run}-none`;
    expect(await wrote(() => db.prepared.run('UPDATE write_witness.witnessed SET id = id WHERE id = $1', [none]))).toBe(false);
    expect(await wrote(() => db.$executeRaw`DELETE FROM write_witness.witnessed WHERE id = ${none}`)).toBe(false);
    expect(await wrote(() => db.$transaction(async (tx) => tx.$executeRaw`UPDATE write_witness.witnessed SET id = id WHERE id = ${none}`))).toBe(false);
    // A guarded WITH (as PaymentStore.commit's): its text cannot say, its sender's reading of the answer does.
    const guarded = (id: string) =>
      Prisma.sql`WITH changed AS (UPDATE write_witness.witnessed SET id = id WHERE id = ${id} RETURNING id) SELECT count(*)::int AS n FROM changed`;
    const changedOne = (answer: { rows: { n: number }[] }) => answer.rows[0]?.n === 1;
    expect(await wrote(() => db.prepared.query(guarded(none)))).toBe(true);
    expect(await wrote(() => db.prepared.query(guarded(none), changedOne))).toBe(false);
    const present = row();
    await db.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${present})`;
    expect(await wrote(() => db.prepared.query(guarded(present), changedOne))).toBe(true);
  });

  it('counts a statement whose answer its sender cannot read as written, and raises no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const noteUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', noteUnhandled);
    try {
      const unreadable = () => {
        throw new Error('an answer of another shape');
      };
      expect(await wrote(() => db.prepared.query(Prisma.sql`SELECT 1 AS n`, unreadable))).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 0)); // Node reports unhandled rejections once microtasks drain
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', noteUnhandled);
    }
  });

  it('keeps a transaction’s write through a BEGIN inside it, which PostgreSQL only warns of', async () => {
    const nested = () =>
      db.prepared.transaction(async (connection) => {
        await connection.query('INSERT INTO write_witness.witnessed VALUES ($1)', [row()]);
        await connection.query('BEGIN');
      });
    expect(await wrote(nested)).toBe(true);
  });

  it('follows a connection checked out with a callback as one checked out with a promise', async () => {
    const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1 });
    witnessWrites(pool);
    const onCheckedOut = (text: string) => () =>
      new Promise<void>((resolve, reject) =>
        pool.connect((error, client, release) => {
          if (error) return reject(error);
          client!
            .query(text, [row()])
            .finally(() => release())
            .then(() => resolve(), reject);
        }),
      );
    try {
      expect(await wrote(onCheckedOut('INSERT INTO write_witness.witnessed VALUES ($1)'))).toBe(true);
      expect(await wrote(onCheckedOut('SELECT $1::text'))).toBe(false);
    } finally {
      await pool.end();
    }
  });

  it('counts a write still on its way as written', async () => {
    const witness = new WriteWitness();
    const sent = witnessed(witness, () => db.prepared.run('INSERT INTO write_witness.witnessed SELECT $1 FROM pg_sleep(0.05)', [row()]));
    expect(witness.wrote).toBe(true);
    await sent;
    expect(witness.wrote).toBe(true);
  });

  it('never counts one request’s statements for another, though the one connection passes from one to the other', async () => {
    const reader = new WriteWitness();
    const writer = new WriteWitness();
    const transactionWriter = new WriteWitness();
    // The reader holds the only connection; the others' statements wait for it, and run when its code releases it.
    await Promise.all([
      witnessed(reader, () => db.prepared.run('SELECT pg_sleep(0.05)', [])),
      witnessed(writer, () => db.prepared.run('INSERT INTO write_witness.witnessed VALUES ($1)', [row()])),
      witnessed(transactionWriter, () => db.$transaction(async (tx) => tx.$executeRaw`INSERT INTO write_witness.witnessed VALUES (${row()})`)),
      witnessed(new WriteWitness(), () => db.$queryRaw`SELECT 1`),
    ]);
    expect([reader.wrote, writer.wrote, transactionWriter.wrote]).toEqual([false, true, true]);
    const later = new WriteWitness();
    await witnessed(later, () => db.$transaction(async (tx) => tx.$queryRaw`SELECT 1`));
    expect(later.wrote).toBe(false);
  });
});
