// The hot paths' statements sent without Prisma (src/platform/db/client.ts): prepared once per connection under a
// name of their text, on the pool Prisma's adapter uses, up to a bound past which a new text runs unnamed.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { CONNECTION_USES, createDatabase, PreparedStatements } from '../../src/platform/db/client.ts';
import { planNodes, type ExplainRow, type PlanNode } from '../support/query-plans.ts';
import { Prisma } from '../../src/generated/prisma/client.ts';

// One connection: what one statement prepared, the next one sees.
const db = createDatabase(inject('databaseUrl'), 1);
afterAll(() => db.$disconnect());

const preparedOnConnection = async () =>
  (await db.$queryRaw<{ name: string; statement: string }[]>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`).map((row) => [
    row.name,
    row.statement,
  ]);

/** A plan's nodes, each as "<type> on <table>[ using <index>]" where it reads one. */
const nodesOf = (plan: PlanNode): string[] =>
  planNodes(plan).map((node) =>
    [node['Node Type'], node['Relation Name'] && `on ${node['Relation Name']}`, node['Index Name'] && `using ${node['Index Name']}`].filter(Boolean).join(' '),
  );

describe('PreparedStatements', () => {
  it('prepares each text once under its own name, with the values as parameters, on the pool Prisma uses', async () => {
    const add = (a: number, b: number) => db.prepared.query<{ sum: number }>(Prisma.sql`SELECT ${a}::int + ${b}::int AS sum`);
    expect((await add(1, 2)).rows).toEqual([{ sum: 3 }]);
    expect((await add(5, 7)).rows).toEqual([{ sum: 12 }]);
    expect((await db.prepared.query(Prisma.sql`SELECT ${'x'}::text AS text`)).rows).toEqual([{ text: 'x' }]);
    expect(await preparedOnConnection()).toEqual([
      ['s0', 'SELECT $1::int + $2::int AS sum'],
      ['s1', 'SELECT $1::text AS text'],
    ]);
  });

  it('runs a transaction again when PostgreSQL rolled it back for a deadlock or a serialization failure, up to three runs in all', async () => {
    const failing = (sqlstate: string) => `DO $$ BEGIN RAISE EXCEPTION 'rolled back' USING ERRCODE = '${sqlstate}'; END $$`;
    /** A transaction whose work writes a row, then fails with the SQLSTATEs given, one a run, and then commits. */
    const transactionFailing = async (sqlstates: string[]) => {
      let runs = 0;
      const outcome = await db.prepared
        .transaction(async (connection) => {
          runs += 1;
          await connection.query('INSERT INTO transaction_runs VALUES ($1)', [runs]);
          const sqlstate = sqlstates[runs - 1];
          if (sqlstate !== undefined) await connection.query(failing(sqlstate));
          return 'committed';
        })
        .catch((error: { code?: string }) => error.code);
      const committed = await db.$queryRaw<{ run: number }[]>`SELECT run FROM transaction_runs`;
      await db.$executeRaw`DELETE FROM transaction_runs`;
      return { outcome, runs, committed: committed.map((row) => row.run) };
    };
    // Temporary, on the one connection: a table in public would meet test/db/schema-parity.test.ts's count of them.
    await db.$executeRaw`CREATE TEMPORARY TABLE transaction_runs (run int)`;
    try {
      // What a rolled-back run wrote is gone; the run that committed stays.
      expect(await transactionFailing(['40P01', '40P01'])).toEqual({ outcome: 'committed', runs: 3, committed: [3] });
      expect(await transactionFailing(['40P01', '40P01', '40P01'])).toEqual({ outcome: '40P01', runs: 3, committed: [] });
      // Any other failure is the caller's at once.
      expect(await transactionFailing(['23505'])).toEqual({ outcome: '23505', runs: 1, committed: [] });
    } finally {
      await db.$executeRaw`DROP TABLE transaction_runs`;
    }
  });

  it('runs a text past its bound unnamed: the server keeps no more of them per connection', async () => {
    const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 1 });
    try {
      const statements = new PreparedStatements(pool, 1);
      await statements.query(Prisma.sql`SELECT 1`);
      expect((await statements.query<{ two: number }>(Prisma.sql`SELECT 2 AS two`)).rows).toEqual([{ two: 2 }]);
      expect((await pool.query('SELECT name, statement FROM pg_prepared_statements')).rows).toEqual([{ name: 's0', statement: 'SELECT 1' }]);
    } finally {
      await pool.end();
    }
  });
});

describe('the pool’s sessions', () => {
  it('are replaced after CONNECTION_USES, so that a plan kept from a table of a few rows does not outlive its growth', async () => {
    // The shape of the idempotency store's stored answers: a plan kept from while its table held a few rows joined it
    // by hash after reading it whole, and kept doing so as it grew (docs/architecture.md, "Database access"). A pool
    // of its own, whose uses this test counts; a schema of its own, whose table no other test sees, never analyzed
    // (autovacuum_enabled off): an ANALYZE would replace the kept plan by itself.
    const own = createDatabase(inject('databaseUrl'), 1);
    const table = `probe_${randomBytes(4).toString('hex')}.answers`;
    const keep = `UPDATE ${table} AS record SET body = kept.body
      FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) AS kept (scope, key, created_at, body)
      WHERE record.scope = kept.scope AND record.key = kept.key AND record.created_at = kept.created_at AND record.body IS NULL`;
    const at = new Date('2026-11-29T12:00:00.000Z');
    const fill = (from: number, to: number) =>
      own.$executeRawUnsafe(`INSERT INTO ${table} SELECT 'probe', n::text, $1::timestamptz, NULL FROM generate_series($2::int, $3::int) AS n`, at, from, to);
    /** Answers for keys `from` to `from + 9`: ten, as many as PostgreSQL guesses an array holds when it plans for any. */
    const keepTen = (from: number) => {
      const keys = Array.from({ length: 10 }, (_, index) => String(from + index));
      return own.prepared.run(keep, [keys.map(() => 'probe'), keys, keys.map(() => at), keys.map(() => 'answer')]);
    };
    /** Enough runs for PostgreSQL to settle on the plan it keeps: a generic one from the sixth. */
    const settle = async () => {
      for (let run = 0; run < 10; run += 1) await keepTen(run * 10);
    };
    /** The connection's backend, and every node of the plan it would run the statement with now (EXPLAIN EXECUTE: the same plan cache as a run). */
    const connectionAndPlan = async () => {
      const [prepared] = await own.$queryRaw<
        { name: string; pid: number }[]
      >`SELECT name, pg_backend_pid() AS pid FROM pg_prepared_statements WHERE statement = ${keep}`;
      const [row] = await own.$queryRawUnsafe<ExplainRow[]>(
        `EXPLAIN (FORMAT JSON) EXECUTE ${prepared!.name}('{probe}', '{1}', '{${at.toISOString()}}', '{answer}')`,
      );
      return { pid: prepared!.pid, nodes: nodesOf(row!['QUERY PLAN'][0].Plan) };
    };
    const schema = table.split('.')[0]!;
    await own.$executeRawUnsafe(`CREATE SCHEMA ${schema}`);
    try {
      await own.$executeRawUnsafe(
        `CREATE TABLE ${table} (scope text, key text, created_at timestamptz NOT NULL, body text, PRIMARY KEY (scope, key)) WITH (autovacuum_enabled = false)`,
      );
      await fill(0, 99);
      await settle();
      await fill(100, 50_000);
      const kept = await connectionAndPlan();
      expect(kept.nodes).toContain(`Seq Scan on answers`);
      // The connection's remaining uses (fewer than CONNECTION_USES so far), then the statement on the one that replaced it.
      for (let use = 0; use < CONNECTION_USES; use += 1) await own.prepared.run('SELECT 1', []);
      await settle();
      const replanned = await connectionAndPlan();
      expect(replanned.pid).not.toBe(kept.pid);
      expect(replanned.nodes).toContain('Index Scan on answers using answers_pkey');
      expect(replanned.nodes).not.toContain('Seq Scan on answers');
    } finally {
      await own.$executeRawUnsafe(`DROP SCHEMA ${schema} CASCADE`);
      await own.$disconnect();
    }
  });

  it('are in UTC whatever the default, so Prisma reads a timestamp right; the URL’s other options still apply', async () => {
    const url = new URL(inject('databaseUrl'));
    url.searchParams.set('options', '-c TimeZone=Asia/Tokyo -c statement_timeout=1234');
    const tokyo = createDatabase(url.toString(), 1);
    try {
      expect((await tokyo.prepared.run<{ TimeZone: string }>('SHOW TimeZone', [])).rows).toEqual([{ TimeZone: 'UTC' }]);
      expect((await tokyo.prepared.run<{ statement_timeout: string }>('SHOW statement_timeout', [])).rows).toEqual([{ statement_timeout: '1234ms' }]);
      const at = new Date('2026-11-28T01:02:03.456Z');
      const [read] = await tokyo.$queryRaw<{ at: Date }[]>`SELECT ${at}::timestamptz AS at`;
      expect(read!.at).toEqual(at);
    } finally {
      await tokyo.$disconnect();
    }
  });
});
