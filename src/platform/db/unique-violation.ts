// Whether a write failed because a unique key it needed was taken: by another request that got there first
// (a dispute's processor id, a subscription period's payment). Prisma reports it as P2002 for its own
// queries, and as P2010 with the driver's SQLSTATE 23505 for raw statements; both carry the index's name. A
// statement sent without Prisma (client.ts, PreparedStatements) fails with node-postgres's own error: 23505 and
// the index as its constraint.
import type { PrismaErrorLike } from './prisma-error.ts';

/** `index`: only a violation of that unique index (its name in the migrations) counts. */
export function isUniqueViolation(error: unknown, index?: string): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, meta, constraint } = error as PrismaErrorLike & { constraint?: unknown };
  if (code === '23505') return index === undefined || constraint === index;
  const cause = meta?.driverAdapterError?.cause;
  const unique = code === 'P2002' || (code === 'P2010' && cause?.originalCode === '23505');
  return unique && (index === undefined || cause?.constraint?.index === index);
}
