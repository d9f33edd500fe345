// A fresh, migrated database beside the others on a server, dropped when done: each test run, a test that
// needs a database of its own, and each benchmark run get one, so runs never collide.
import pg from 'pg';
import { migrate } from './migrate.ts';
import { ensureDatabase } from './reachability.ts';

export interface ScratchDatabase {
  url: string;
  drop: () => Promise<void>;
}

/** Creates and migrates database `name` on the server of `serverUrl` (any database URL of that server). */
export async function createScratchDatabase(serverUrl: string, name: string): Promise<ScratchDatabase> {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  await migrate(url.toString());
  return {
    url: url.toString(),
    drop: () => dropDatabase(serverUrl, name),
  };
}

/** Drops database `name` on the server of `serverUrl`, closing whatever connections it still has. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  // Connect to the maintenance database: a database cannot be dropped from a connection to itself.
  const maintenance = new URL(serverUrl);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
