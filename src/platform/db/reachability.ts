// Start-up checks that turn "cannot connect" into one line an operator can act on.
import pg from 'pg';
import { StartupError } from '../startup-error.ts';
import { Redis } from 'ioredis';

export class ServiceUnreachableError extends StartupError {}

/** The URL without its password, safe to print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

const START_POSTGRES = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';
const START_REDIS = 'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no';

function reason(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return code ?? message ?? String(error);
}

async function connectPostgres(connectionString: string, shownUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => {});
    if ((error as { code?: string }).code === '3D000') {
      throw new ServiceUnreachableError(`the database of ${redactUrl(shownUrl)} does not exist; create and migrate it with: npm run db:migrate`);
    }
    throw new ServiceUnreachableError(`cannot reach PostgreSQL at ${redactUrl(shownUrl)} (${reason(error)}); start it with: ${START_POSTGRES}`);
  }
}

/** Fails with one actionable line when the database cannot be reached. */
export async function checkPostgres(databaseUrl: string): Promise<void> {
  const client = await connectPostgres(databaseUrl, databaseUrl);
  await client.end();
}

/** Creates the database named in `databaseUrl` when it does not exist yet (connecting to "postgres" to do so). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const client = await connectPostgres(maintenance.toString(), databaseUrl);
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created concurrently by another process: fine
      });
    }
  } finally {
    await client.end();
  }
}

export async function checkRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3_000, retryStrategy: () => null });
  redis.on('error', () => {}); // reported below, once
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new ServiceUnreachableError(`cannot reach Redis at ${redactUrl(redisUrl)} (${reason(error)}); start it with: ${START_REDIS}`);
  } finally {
    redis.disconnect();
  }
}
