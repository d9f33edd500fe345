// The hot paths' statements sent without Prisma (src/platform/db/client.ts): prepared once per connection under a
// name of their text, on the pool Prisma's adapter uses, up to a bound past which a new text runs unnamed.
import { afterAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createDatabase, PreparedStatements } from '../../src/platform/db/client.ts';
import { Prisma } from '../../src/generated/prisma/client.ts';

// One connection: what one statement prepared, the next one sees.
const db = createDatabase(inject('databaseUrl'), 1);
afterAll(() => db.$disconnect());

const preparedOnConnection = async () =>
  (await db.$queryRaw<{ name: string; statement: string }[]>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`).map((row) => [
    row.name,
    row.statement,
  ]);

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
