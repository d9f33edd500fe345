// The one PrismaClient of a process, on node-postgres through Prisma 7's driver adapter, and the hot paths'
// statements sent on the same pool without Prisma (docs/architecture.md, "Database access").
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient, type Prisma } from '../../generated/prisma/client.ts';
import { witnessWrites, WROTE_WHEN } from './write-witness.ts';

/** What runs a statement: the pool, or one of its connections inside a transaction of its own. */
export type SqlExecutor = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** How many times PreparedStatements.transaction runs its work at most. */
const TRANSACTION_RUNS = 3;
/** deadlock_detected: PostgreSQL rolled the transaction back, and it may simply run again (every transaction here is READ COMMITTED, where serialization failures do not occur). */
const RETRIED_SQLSTATES = new Set<unknown>(['40P01']);

/**
 * Statements sent straight through node-postgres, as named prepared statements: PostgreSQL parses and plans
 * each text once per connection (CONNECTION_USES), and the statement skips Prisma's client runtime.
 * Only for statements that stand alone: one inside a Prisma transaction must run on that transaction's connection
 * (tx), not here.
 */
export class PreparedStatements {
  /** Texts and their statement names; past the bound a new text runs unnamed (the server keeps each named one per connection). */
  readonly #names = new Map<string, string>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly maxNames = 256,
  ) {}

  /**
   * Runs `statement` (Prisma.sql, whose values are parameters), prepared under a name of its text. `wroteWhen` reads
   * from its answer whether it wrote, for one whose text cannot say (write-witness.ts, WROTE_WHEN).
   */
  query<Row extends pg.QueryResultRow>(statement: Prisma.Sql, wroteWhen?: (result: pg.QueryResult<Row>) => boolean): Promise<pg.QueryResult<Row>> {
    return this.run<Row>(statement.text, statement.values, this.pool, wroteWhen);
  }

  /** Runs `text` with its `values`, prepared under a name of its text: on the pool, or on `executor`, a connection inside `transaction`. */
  run<Row extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    executor: SqlExecutor = this.pool,
    wroteWhen?: (result: pg.QueryResult<Row>) => boolean,
  ): Promise<pg.QueryResult<Row>> {
    const config: pg.QueryConfig & { [WROTE_WHEN]?: typeof wroteWhen } = { name: this.#nameOf(text), text, values };
    if (wroteWhen !== undefined) config[WROTE_WHEN] = wroteWhen;
    return executor.query<Row>(config);
  }

  /**
   * `work` in a transaction of its own on one of the pool's connections: committed when it resolves, rolled back
   * when it throws. Run again, up to TRANSACTION_RUNS in all, when PostgreSQL rolled it back for a deadlock: writers that take their locks in one order (docs/architecture.md, "Database access")
   * do not deadlock, but a row that changed between two statements of a transaction may still be locked out of
   * that order, and a transaction rolled back whole is safe to run again. So `work` acts only through `connection`.
   */
  async transaction<T>(work: (connection: SqlExecutor) => Promise<T>): Promise<T> {
    for (let run = 1; ; run += 1) {
      try {
        return await this.#transactionOnce(work);
      } catch (error) {
        if (run >= TRANSACTION_RUNS || !RETRIED_SQLSTATES.has((error as { code?: unknown }).code)) throw error;
      }
    }
  }

  async #transactionOnce<T>(work: (connection: SqlExecutor) => Promise<T>): Promise<T> {
    const connection = await this.pool.connect();
    try {
      await connection.query('BEGIN');
      const result = await work(connection);
      await connection.query('COMMIT');
      return result;
    } catch (error) {
      await connection.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      connection.release();
    }
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

/** The PrismaClient, and its pool's hot statements sent without it (`prepared`). */
export type Database = PrismaClient & { readonly prepared: PreparedStatements };

/**
 * Checkouts after which a pooled connection is replaced, so that the plans PostgreSQL keeps for its named statements,
 * made on the tables as they were, do not outlive the tables' growth (docs/architecture.md, "Database access").
 */
export const CONNECTION_USES = 1_000;

/** `transactionMaxWaitMs`: how long a transaction waits for a pooled connection (Prisma's maxWait, 2 s by default). */
export function createDatabase(databaseUrl: string, poolSize: number, transactionMaxWaitMs = 2_000): Database {
  const pool = new pg.Pool({ ...sessionSettings(databaseUrl), max: poolSize, connectionTimeoutMillis: 5_000, maxUses: CONNECTION_USES });
  // An idle connection that fails is dropped by the pool; the next statement that needs one sees the error.
  pool.on('error', () => {});
  // Before Prisma's adapter sends anything: every statement of a keyed mutation counts towards its answer being kept.
  witnessWrites(pool);
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }), transactionOptions: { maxWait: transactionMaxWaitMs } });
  return Object.assign(client, { prepared: new PreparedStatements(pool) });
}

/**
 * The pool's session settings: every session in UTC whatever the server's or role's default (Prisma's adapter reads a
 * timestamptz's text as UTC without its offset, so a session in another zone would shift every time Prisma reads). A
 * startup option after the URL's own, which node-postgres would otherwise prefer to the config's
 * (docs/configuration.md, DATABASE_URL).
 */
function sessionSettings(databaseUrl: string): { connectionString: string; options: string } {
  const url = new URL(databaseUrl);
  const options = [url.searchParams.get('options'), '-c TimeZone=UTC'].filter((option) => option !== null).join(' ');
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options };
}
