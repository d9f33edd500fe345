// Whether a piece of work wrote to the database: what an idempotency key's answer rests on (docs/architecture.md,
// "Idempotency"). Once a keyed mutation has written (a refund's row, then its processor call), its answer is
// kept whatever it says, a refusal or an outage included, so a retry replays it rather than acting twice. The
// witness sees every statement on the pool (Prisma's and the prepared ones) where the caller sends it, so no
// store has to remember to say it wrote.
import type pg from 'pg';
import { currentScope, runInScope } from '../request-scope.ts';

/** What one run of `witnessing` saw. */
export class WriteWitness {
  #committed = false;
  /** Writes sent and not yet answered: counted as written until the server says they were undone. */
  #inFlight = 0;

  /** Whether a write committed, may have (it failed without the server saying it was undone), or is still on its way. */
  get wrote(): boolean {
    return this.#committed || this.#inFlight > 0;
  }

  /**
   * Follows one write (a statement outside a transaction, or a transaction's COMMIT) until the server answers it;
   * `changed` reads its answer (a guarded UPDATE that matched no row changed nothing).
   */
  follow<Result = pg.QueryResult>(sent: unknown, changed: (result: Result) => boolean): void {
    if (sent === undefined || typeof (sent as Promise<unknown>).then !== 'function') {
      this.#committed = true; // sent with a callback: nothing to wait on, so counted as written
      return;
    }
    this.#inFlight += 1;
    (sent as Promise<Result>).then(
      (result) => this.#settled(() => changed(result)),
      (error: unknown) => this.#settled(() => mayHaveCommitted(error)),
    );
  }

  /** An answer its reader cannot read (the reader threw) counts as written, and never becomes an unhandled rejection. */
  #settled(committed: () => boolean): void {
    this.#inFlight -= 1;
    let wrote: boolean;
    try {
      wrote = committed();
    } catch {
      wrote = true; // the safe side: the key's answer is kept, so a retry replays it instead of acting again
    }
    if (wrote) this.#committed = true;
  }
}

/**
 * Runs `work`, and everything it starts, under `witness`. The witness rides in the request's scope: a second
 * AsyncLocalStorage would cost every promise of the process a property of its own.
 */
export const witnessing = <T>(witness: WriteWitness, work: () => T): T => runInScope({ log: {}, ...currentScope(), writes: witness }, work);

/**
 * A statement sent for many pieces of work at once (a batch: platform/batcher.ts) runs `unwitnessed`, outside the
 * witness of whichever piece of work happened to start it; each piece's own witness follows its share of the
 * answer instead (`witnessShare`).
 */
export const unwitnessed = <T>(send: () => T): T => runInScope({ log: {}, ...currentScope(), writes: undefined }, send);

/** A piece of work's `share` in a batch's write (`unwitnessed`), followed by its witness; `wrote` reads whether its part wrote. */
export function witnessShare<T>(share: Promise<T>, wrote: (result: T) => boolean): Promise<T> {
  currentWitness()?.follow(share, wrote);
  return share;
}

/**
 * Whether a statement failed for some of the rows it wrote (a value, a key taken, a deadlock with another writer:
 * SQLSTATE classes 22, 23 and 40), so that a batch's items may each succeed alone (platform/batcher.ts,
 * `runsAloneAfter`). Anything else (no connection, one lost mid-statement, a timeout) is every item's, and so is
 * 40003 (statement_completion_unknown: it may have committed).
 */
export function failedOnItsRows(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code);
  return /^(22|23|40)...$/.test(code) && code !== '40003';
}

/**
 * Whether a statement that failed may still have committed. An SQLSTATE is the server's own answer: the statement
 * was rolled back, unless the server was shutting down (57P0x, which may come after a commit; not 57P03, refused
 * while connecting, before anything was sent) or cannot tell (40003, statement_completion_unknown, as failedOnItsRows
 * reads it too: PostgreSQL itself never raises it, but a trigger's RAISE or a compatible server such as CockroachDB
 * may). A connection that was never made sent nothing. Anything else (a connection lost mid-statement) may hide a commit.
 */
export function mayHaveCommitted(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return (code.startsWith('57P') && code !== '57P03') || code === '40003';
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND') return false;
  return !(typeof message === 'string' && message.startsWith('timeout exceeded when trying to connect'));
}

type StatementKind = 'read' | 'write' | 'counted write' | 'begin' | 'commit' | 'rollback';

const LEADING_KEYWORD = /^(?:\s|--[^\n]*\n|\/\*[^]*?\*\/)*([A-Za-z]+)(?:\s+([A-Za-z]+))?/;
const READS = new Set(['SELECT', 'SHOW', 'VALUES', 'TABLE', 'SET', 'RESET', 'SAVEPOINT', 'RELEASE', 'DEALLOCATE', 'DISCARD', 'LISTEN']);
/** Statements whose row count is the rows they changed: none changed, nothing was written. */
const COUNTED_WRITES = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);
/** A data-modifying statement inside a WITH (PostgreSQL's writable CTEs); a column or table name with one of these as a whole word is read as one too, erring towards a write. */
const WRITES_WITHIN = /\b(?:INSERT|UPDATE|DELETE|MERGE)\b/i;

/**
 * What a statement does, from its text. A plain INSERT, UPDATE, DELETE or MERGE is a counted write (its row count
 * says whether it wrote); anything else not known to be a read or transaction control (a WITH that writes, DO, a
 * call) is a write, unless its sender says how to read its answer (`WROTE_WHEN`).
 */
export function statementKind(text: string): StatementKind {
  const [, first = '', second = ''] = LEADING_KEYWORD.exec(text) ?? [];
  const keyword = first.toUpperCase();
  if (keyword === 'BEGIN' || keyword === 'START') return 'begin';
  if (keyword === 'COMMIT' || keyword === 'END') return 'commit';
  if (keyword === 'ROLLBACK' || keyword === 'ABORT') return second.toUpperCase() === 'TO' ? 'read' : 'rollback';
  if (keyword === 'WITH') return WRITES_WITHIN.test(text) ? 'write' : 'read';
  if (COUNTED_WRITES.has(keyword)) return 'counted write';
  return READS.has(keyword) ? 'read' : 'write';
}

/**
 * A query config's property saying, from a statement's answer, whether it wrote: for a statement the text cannot
 * tell of, such as a guarded WITH whose CTEs all match no row when its guard fails (PaymentStore.commit).
 */
export const WROTE_WHEN = Symbol('wroteWhen');
type QueryConfig = { text?: unknown; [WROTE_WHEN]?: (result: pg.QueryResult) => boolean } | null;

/** How to read whether a statement of `kind`, sent with `query`, wrote: null for one that cannot. */
function changedBy(kind: StatementKind, query: unknown): ((result: pg.QueryResult) => boolean) | null {
  const told = typeof query === 'object' ? (query as QueryConfig)?.[WROTE_WHEN] : undefined;
  if (told !== undefined) return told;
  if (kind === 'counted write') return (result) => (result?.rowCount ?? 1) > 0;
  return kind === 'write' ? () => true : null;
}

/** A transaction's COMMIT answered ROLLBACK (it had failed) wrote nothing. */
const committed = (result: pg.QueryResult) => result?.command !== 'ROLLBACK';

const textOf = (query: unknown): string => (typeof query === 'string' ? query : String((query as { text?: unknown } | null)?.text ?? ''));

/** A checked-out connection's witness (the one current where it was checked out) and its open transaction's writes. */
interface Checkout {
  witness: WriteWitness;
  /** The writes of the open transaction, followed as the witness follows writes: its COMMIT counts if they wrote. */
  transaction: WriteWitness | null;
}

/**
 * Has `pool` tell the witness current where a statement is sent whether it wrote: a write outside a transaction
 * once it commits, a transaction with a write once its COMMIT does. A statement `pool.query` sends on a
 * connection of its own is seen where `pool.query` was called: its connection may be handed over later, from
 * another request's code. Prisma's batched requests (the array form of `$transaction`) would be sent from the
 * code of whichever request started the batch: eslint refuses that form (eslint.config.js).
 */
export function witnessWrites(pool: pg.Pool): void {
  const checkouts = new WeakMap<pg.PoolClient, Checkout>();
  const watched = new WeakSet<pg.PoolClient>();
  /** Set while pool.query runs: its own checkout (callback style, synchronous) gets no witness. */
  let inPoolQuery = false;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    const witness = currentWitness();
    const outer = inPoolQuery; // a pool.query called from inside another's checkout leaves it as it found it
    inPoolQuery = true;
    let sent: unknown;
    try {
      sent = query(...args);
    } finally {
      inPoolQuery = outer;
    }
    const changed = witness === undefined ? null : changedBy(statementKind(textOf(args[0])), args[0]);
    if (changed !== null) witness!.follow(sent, changed);
    return sent;
  }) as typeof pool.query;

  const watch = (client: pg.PoolClient) => {
    if (watched.has(client)) return;
    watched.add(client);
    const clientQuery = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const sent = clientQuery(...args);
      const checkout = checkouts.get(client);
      if (checkout !== undefined) follow(checkout, args[0], sent);
      return sent;
    }) as typeof client.query;
  };
  const checkedOut = (client: pg.PoolClient, witness: WriteWitness | undefined) => {
    watch(client);
    if (witness === undefined) checkouts.delete(client);
    else checkouts.set(client, { witness, transaction: null });
  };
  type Callback = (error: Error | undefined, client?: pg.PoolClient, done?: unknown) => void;
  const connect = pool.connect.bind(pool) as (callback?: Callback) => unknown;
  pool.connect = ((callback?: Callback) => {
    const witness = inPoolQuery ? undefined : currentWitness();
    if (callback !== undefined) {
      return connect((error, client, done) => {
        if (client !== undefined) checkedOut(client, witness);
        callback(error, client, done);
      });
    }
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      checkedOut(client, witness);
      return client;
    });
  }) as typeof pool.connect;
}

const currentWitness = () => currentScope()?.writes as WriteWitness | undefined;

function follow(checkout: Checkout, query: unknown, sent: unknown): void {
  const kind = statementKind(textOf(query));
  if (kind === 'begin') {
    // A BEGIN inside a transaction is only warned of by PostgreSQL: the transaction goes on.
    checkout.transaction ??= new WriteWitness();
  } else if (kind === 'commit') {
    if (checkout.transaction?.wrote) checkout.witness.follow(sent, committed);
    checkout.transaction = null;
  } else if (kind === 'rollback') {
    checkout.transaction = null;
  } else {
    const changed = changedBy(kind, query);
    if (changed !== null) (checkout.transaction ?? checkout.witness).follow(sent, changed);
  }
}
