// The one PrismaClient of a process, on node-postgres through Prisma 7's driver adapter.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../../generated/prisma/client.ts';

export type Database = PrismaClient;

/** `transactionMaxWaitMs`: how long a transaction waits for a pooled connection (Prisma's maxWait, 2 s by default). */
export function createDatabase(databaseUrl: string, poolSize: number, transactionMaxWaitMs = 2_000): Database {
  return new PrismaClient({
    adapter: new PrismaPg({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5_000 }),
    transactionOptions: { maxWait: transactionMaxWaitMs },
  });
}
