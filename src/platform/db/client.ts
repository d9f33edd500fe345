// The one PrismaClient of a process, on node-postgres through Prisma 7's driver adapter, and the hot paths'
// statements sent on the same pool without Prisma (docs/architecture.md, "Database access").
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient, type Prisma } from '../../generated/prisma/client.ts';

/**
 * Statements sent straight through node-postgres, as named prepared statements: PostgreSQL parses and plans
 * each text once per connection, and the statement skips Prisma's client runtime. Only for statements that
 * stand alone: one inside a Prisma transaction must run on that transaction's connection (tx), not here.
 */
export class PreparedStatements {
  /** Texts and their statement names; past the bound a new text runs unnamed (the server keeps each named one per connection). */
  readonly #names = new Map<string, string>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly maxNames = 256,
  ) {}

  /** Runs `statement` (Prisma.sql, whose values are parameters), prepared under a name of its text. */
  query<Row extends pg.QueryResultRow>(statement: Prisma.Sql): Promise<pg.QueryResult<Row>> {
    return this.pool.query<Row>({ name: this.#nameOf(statement.text), text: statement.text, values: statement.values });
  }

  #nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < this.maxNames) {
      name = `s${this.#names.size}`;
      this.#names.set(text, name);
    }
    return name;
  }
}

/** What runs a hand-written statement: the pool, or one of its connections inside a transaction of its own. */
export type SqlExecutor = Pick<pg.Pool | pg.PoolClient, 'query'>;
export type SqlPool = pg.Pool;

/**
 * The PrismaClient, its pool's hot statements named by text (`prepared`), and the pool itself (`pool`) for the
 * stores that name their few statements themselves and run their own transactions on it (webhook delivery).
 */
export type Database = PrismaClient & { readonly prepared: PreparedStatements; readonly pool: SqlPool };

/** `transactionMaxWaitMs`: how long a transaction waits for a pooled connection (Prisma's maxWait, 2 s by default). */
export function createDatabase(databaseUrl: string, poolSize: number, transactionMaxWaitMs = 2_000): Database {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle connection that fails is dropped by the pool; the next statement that needs one sees the error.
  pool.on('error', () => {});
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }), transactionOptions: { maxWait: transactionMaxWaitMs } });
  return Object.assign(client, { prepared: new PreparedStatements(pool), pool });
}
