// The one PrismaClient of a process, on node-postgres through Prisma 7's driver adapter, and the pool under it
// (the same connections), for the few hot paths that send their one statement as a prepared statement of their
// own rather than through Prisma's query path (docs/benchmarks.md, "Reading it").
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../../generated/prisma/client.ts';

export type Database = PrismaClient;

/** What runs a statement: the pool, or one of its connections inside a transaction. */
export type SqlExecutor = Pick<pg.Pool | pg.PoolClient, 'query'>;
export type SqlPool = pg.Pool;

export function createPool(databaseUrl: string, poolSize: number): SqlPool {
  return new pg.Pool({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5_000 });
}

/** A PrismaClient on a pool of its own, or on `pool`, which it ends when it disconnects. */
export function createDatabase(databaseUrl: string, poolSize: number, pool: SqlPool = createPool(databaseUrl, poolSize)): Database {
  return new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
}
