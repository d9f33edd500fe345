// Whether a write failed because a unique key it needed was taken: by another request that got there first
// (a dispute's processor id, a subscription period's payment). Prisma reports it as P2002 for its own
// queries, and as the driver's SQLSTATE 23505 for raw statements.
interface ErrorLike {
  code?: unknown;
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
}

export function isUniqueViolation(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, meta } = error as ErrorLike;
  return code === 'P2002' || (code === 'P2010' && meta?.driverAdapterError?.cause?.originalCode === '23505');
}
