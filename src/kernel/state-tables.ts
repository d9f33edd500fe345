// What every status table of the domain (refunds, disputes, payouts, mandates, the payment intent) answers
// from its rows alone, so each table is the one source of its moves.

export interface StatusRow<Status extends string> {
  from: Status | null;
  to: Status;
}

/** The table's move predicate: true when a row leads from `from` to `to` (staying put is not a move). */
export function movesOf<Status extends string>(rows: readonly StatusRow<Status>[]): (from: Status, to: Status) => boolean {
  const moves = new Set(rows.filter((row) => row.from !== null).map((row) => `${row.from}>${row.to}`));
  return (from, to) => moves.has(`${from}>${to}`);
}

/** The statuses rows lead from into `to`. */
export function sourcesOf<Status extends string>(rows: readonly StatusRow<Status>[], to: Status): Status[] {
  return rows.flatMap((row) => (row.to === to && row.from !== null ? [row.from] : []));
}

/** The statuses the rows take from `from` to `to`, shortest first (`to` last); [] when there already; null when none lead there. */
export function pathOf<Status extends string>(rows: readonly StatusRow<Status>[], from: Status, to: Status): Status[] | null {
  if (from === to) return [];
  const queue: { status: Status; path: Status[] }[] = [{ status: from, path: [] }];
  const seen = new Set<Status>([from]);
  while (queue.length > 0) {
    const { status, path } = queue.shift()!;
    for (const row of rows) {
      if (row.from !== status || seen.has(row.to)) continue;
      if (row.to === to) return [...path, to];
      seen.add(row.to);
      queue.push({ status: row.to, path: [...path, row.to] });
    }
  }
  return null;
}
