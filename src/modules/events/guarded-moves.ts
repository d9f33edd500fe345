// Applying a processor's answer to a resource with one status (a refund, a dispute, a payout): the change is
// planned from the row as read, written in one transaction only if the row's version is still the one
// read, with whatever else the move entails (a refund's reservation given back) and the event it emits;
// the event goes to the relay after commit. A concurrent change makes it re-read and re-plan, a few times.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Database } from '../../platform/db/client.ts';
import type { CommittedEvent, EventOutbox } from './outbox.ts';

/** How many times an answer is re-applied when a concurrent change moved the resource first. */
const MAX_COMMIT_RETRIES = 3;

export type ApplyOutcome = 'committed' | 'unchanged' | 'deferred';

type Transaction = Prisma.TransactionClient;

export interface GuardedMove<Row extends { status: string }> {
  read(): Promise<Row>;
  /** What to write, or null when the answer changes nothing (no row of the table leads to it). */
  plan(row: Row): object | null;
  /** The update guarded by `row`'s version; undefined when someone changed it first. */
  write(tx: Transaction, row: Row, data: object): Promise<Row | undefined>;
  /** Inside the transaction, after a status change: its other effects and the events it emits (null: none). */
  moved(tx: Transaction, before: Row, after: Row): Promise<(CommittedEvent | null)[]>;
}

export async function applyGuardedMove<Row extends { status: string }>(
  db: Database,
  outbox: EventOutbox,
  move: GuardedMove<Row>,
): Promise<{ row: Row; outcome: ApplyOutcome }> {
  for (let attempt = 1; ; attempt += 1) {
    const row = await move.read();
    const data = move.plan(row);
    if (data === null) return { row, outcome: 'unchanged' };
    let events: (CommittedEvent | null)[] = [];
    const written = await db.$transaction(async (tx) => {
      const after = await move.write(tx, row, data);
      if (after !== undefined && after.status !== row.status) events = await move.moved(tx, row, after);
      return after;
    });
    if (written !== undefined) {
      for (const event of events) if (event !== null) outbox.afterCommit(event);
      return { row: written, outcome: written.status !== row.status ? 'committed' : 'unchanged' };
    }
    if (attempt >= MAX_COMMIT_RETRIES) return { row: await move.read(), outcome: 'deferred' };
  }
}
