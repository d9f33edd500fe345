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
  if (!after) return {};
  const cursor = decodeCursor(after, kind);
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

function decodeCursor(cursor: string, kind: IdKind): Position {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = parseInstant(iso ?? '');
  if (!id || !isId(kind, id) || createdAt === null) throw invalidInput('after', 'is not a cursor this API returned');
  return { createdAt, id };
}
