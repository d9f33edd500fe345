// Whether a piece of work wrote to the database: what an idempotency key's answer rests on (docs/architecture.md,
// "Idempotency"). Once a keyed mutation has written (a refund's row, then its processor call), its answer is
// kept whatever it says, a refusal or an outage included, so a retry replays it rather than acting twice. The
// witness sees every statement on the pool (Prisma's and the prepared ones) where the caller sends it, so no
// store has to remember to say it wrote.
import type pg from 'pg';
import { currentScope, runInScope, type RequestScope } from '../request-scope.ts';

/** What one run of `witnessing` saw. */
export class WriteWitness {
  #committed = false;
  /** Writes sent and not yet answered: counted as written until the server says they were undone. */
  #inFlight = 0;

  /** Whether a write committed, may have (it failed without the server saying it was undone), or is still on its way. */
  get wrote(): boolean {
    return this.#committed || this.#inFlight > 0;
  }

  /** Follows one write (a statement outside a transaction, or a transaction's COMMIT) until the server answers it. */
  follow(sent: unknown): void {
    if (sent === undefined || typeof (sent as Promise<unknown>).then !== 'function') {
      this.#committed = true; // sent with a callback: nothing to wait on, so counted as written
      return;
    }
    this.#inFlight += 1;
    (sent as Promise<unknown>).then(
      // A COMMIT of a transaction that had failed is answered ROLLBACK, not an error.
      (result) => this.#settled((result as { command?: unknown } | undefined)?.command !== 'ROLLBACK'),
      (error: unknown) => this.#settled(mayHaveCommitted(error)),
    );
  }

  #settled(committed: boolean): void {
    this.#inFlight -= 1;
    if (committed) this.#committed = true;
  }
}

/**
 * Runs `work`, and everything it starts, under `witness`. The witness rides in the request's scope: a second
 * AsyncLocalStorage would cost every promise of the process a property of its own.
 */
export const witnessing = <T>(witness: WriteWitness, work: () => T): T => runInScope({ log: {}, ...currentScope(), writes: witness }, work);

/**
 * Whether a statement that failed may still have committed. An SQLSTATE is the server's own answer: the statement
 * was rolled back, unless the server was shutting down (57P0x, which may come after a commit). A connection that
 * was never made sent nothing. Anything else (a connection lost mid-statement) may hide a commit.
 */
export function mayHaveCommitted(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code.startsWith('57P');
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND') return false;
  return !(typeof message === 'string' && message.startsWith('timeout exceeded when trying to connect'));
}

type StatementKind = 'read' | 'write' | 'begin' | 'commit' | 'rollback';

const LEADING_KEYWORD = /^(?:\s|--[^\n]*\n|\/\*[^]*?\*\/)*([A-Za-z]+)(?:\s+([A-Za-z]+))?/;
const READS = new Set(['SELECT', 'SHOW', 'VALUES', 'TABLE', 'SET', 'RESET', 'SAVEPOINT', 'RELEASE', 'DEALLOCATE', 'DISCARD', 'LISTEN']);
/** A data-modifying statement inside a WITH (PostgreSQL's writable CTEs); a column or table name with one of these as a whole word is read as one too, erring towards a write. */
const WRITES_WITHIN = /\b(?:INSERT|UPDATE|DELETE|MERGE)\b/i;

/** What a statement does, from its text: anything not known to be a read or transaction control counts as a write. */
export function statementKind(text: string): StatementKind {
  const [, first = '', second = ''] = LEADING_KEYWORD.exec(text) ?? [];
  const keyword = first.toUpperCase();
  if (keyword === 'BEGIN' || keyword === 'START') return 'begin';
  if (keyword === 'COMMIT' || keyword === 'END') return 'commit';
  if (keyword === 'ROLLBACK' || keyword === 'ABORT') return second.toUpperCase() === 'TO' ? 'read' : 'rollback';
  if (keyword === 'WITH') return WRITES_WITHIN.test(text) ? 'write' : 'read';
  return READS.has(keyword) ? 'read' : 'write';
}

const textOf = (query: unknown): string => (typeof query === 'string' ? query : String((query as { text?: unknown } | null)?.text ?? ''));

/** A checked-out connection's witness (the one current where it was checked out) and its transaction so far. */
interface Checkout {
  witness: NonNullable<RequestScope['writes']>;
  inTransaction: boolean;
  wroteInTransaction: boolean;
}

/**
 * Has `pool` tell the witness current where a statement is sent whether it wrote: a write outside a transaction
 * once it commits, a transaction with a write once its COMMIT does. A statement `pool.query` sends on a
 * connection of its own is seen where `pool.query` was called: its connection may be handed over later, from
 * another request's code.
 */
export function witnessWrites(pool: pg.Pool): void {
  const checkouts = new WeakMap<pg.PoolClient, Checkout>();
  const watched = new WeakSet<pg.PoolClient>();
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    const witness = currentScope()?.writes;
    const sent = query(...args);
    if (witness !== undefined && statementKind(textOf(args[0])) === 'write') witness.follow(sent);
    return sent;
  }) as typeof pool.query;

  const watch = (client: pg.PoolClient) => {
    if (watched.has(client)) return;
    watched.add(client);
    const clientQuery = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const sent = clientQuery(...args);
      const checkout = checkouts.get(client);
      if (checkout !== undefined) follow(checkout, statementKind(textOf(args[0])), sent);
      return sent;
    }) as typeof client.query;
  };
  const connect = pool.connect.bind(pool) as (callback?: (error: Error | undefined, client?: pg.PoolClient, done?: unknown) => void) => unknown;
  pool.connect = ((callback?: (error: Error | undefined, client?: pg.PoolClient, done?: unknown) => void) => {
    if (callback !== undefined) {
      // pool.query's own checkout (its statement was seen where pool.query was called), or a caller's with a callback: no witness.
      return connect((error, client, done) => {
        if (client !== undefined) checkouts.delete(client);
        callback(error, client, done);
      });
    }
    const witness = currentScope()?.writes;
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      watch(client);
      if (witness === undefined) checkouts.delete(client);
      else checkouts.set(client, { witness, inTransaction: false, wroteInTransaction: false });
      return client;
    });
  }) as typeof pool.connect;
}

function follow(checkout: Checkout, kind: StatementKind, sent: unknown): void {
  switch (kind) {
    case 'begin':
      checkout.inTransaction = true;
      checkout.wroteInTransaction = false;
      return;
    case 'write':
      if (checkout.inTransaction) checkout.wroteInTransaction = true;
      else checkout.witness.follow(sent);
      return;
    case 'commit':
      if (checkout.inTransaction && checkout.wroteInTransaction) checkout.witness.follow(sent);
      checkout.inTransaction = false;
      return;
    case 'rollback':
      checkout.inTransaction = false;
      return;
    case 'read':
      return;
  }
}
