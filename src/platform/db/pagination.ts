// Cursor pagination of a list newest first, the order every list query of the API uses. A cursor is the
// base64url of a row's creation instant and id: the id breaks ties between rows created in the same millisecond.
import { invalidInput } from '../../kernel/errors.ts';
import { isId, type IdKind } from '../../kernel/ids.ts';
import { parseInstant } from '../../kernel/instants.ts';

export const DEFAULT_PAGE_SIZE = 20;

interface Position {
  createdAt: Date;
  id: string;
}

/** A where-clause filter for the rows older than the cursor `after` of a `kind` row; none without a cursor. */
export function olderThanCursor(after: string | null | undefined, kind: IdKind) {
  const cursor = decodeCursor(after, kind);
  if (!cursor) return {};
  return { OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }] };
}

/** The first `first` of `rows` (queried newest first with `take: first + 1`) as a connection page. */
export function connectionPage<Row extends Position>(rows: Row[], first: number) {
  const page = rows.slice(0, first);
  return {
    edges: page.map((node) => ({ node, cursor: encodeCursor(node) })),
    pageInfo: { hasNextPage: rows.length > first, endCursor: page.length ? encodeCursor(page.at(-1)!) : null },
  };
}

function encodeCursor(row: Position): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

/** The position the cursor `after` of a `kind` row names (INVALID_INPUT on a cursor this API did not return); null without one. */
export function decodeCursor(cursor: string | null | undefined, kind: IdKind): Position | null {
  if (!cursor) return null;
  const [iso, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = parseInstant(iso ?? '');
  if (!id || !isId(kind, id) || createdAt === null) throw invalidInput('after', 'is not a cursor this API returned');
  return { createdAt, id };
}
