// The one PrismaClient of a process, on node-postgres through Prisma 7's driver adapter.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../../generated/prisma/client.ts';

export type Database = PrismaClient;

export function createDatabase(databaseUrl: string, poolSize: number): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: poolSize, connectionTimeoutMillis: 5_000 }) });
}
