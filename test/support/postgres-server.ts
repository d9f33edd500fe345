// A PostgreSQL server of the test's own: a throwaway cluster (initdb into a temporary directory, started
// with pg_ctl on a free port), so that a test can stop and start it, as a crash or a restart would, without
// touching the server on 5432 that every other test run shares. Removed at the end.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { closedPort } from './stack.ts';

const run = promisify(execFile);

export interface OwnPostgres {
  /** A URL of the server's maintenance database (`postgres`), as createScratchDatabase takes it. */
  url: string;
  port: number;
  /**
   * Stops the server. `immediate` (the default) is a crash: the postmaster and its backends die at once,
   * open transactions are lost and the next start runs crash recovery; `fast` is an orderly shutdown.
   */
  stop: (mode?: 'immediate' | 'fast') => Promise<void>;
  start: () => Promise<void>;
  /** Stops the server and deletes its data directory. */
  remove: () => Promise<void>;
  /** The server's log, for a failing test's message. */
  logFile: string;
}

/** The newest PostgreSQL installed in Debian's layout (/usr/lib/postgresql/<version>/bin). */
async function binDirectory(): Promise<string> {
  const versions = (await readdir('/usr/lib/postgresql')).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  const found = versions.map((version) => `/usr/lib/postgresql/${version}/bin`).find((dir) => existsSync(join(dir, 'pg_ctl')));
  if (found === undefined) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/<version>/bin');
  return found;
}

/** Runs a PostgreSQL binary as the `postgres` user when we are root (the server refuses to run as root). */
function asPostgres(binary: string, args: string[]) {
  return run(...asPostgresCommand(binary, args));
}

function asPostgresCommand(binary: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = await binDirectory();
  const root = await mkdtemp(join(tmpdir(), 'payments-pg-'));
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(root, Number(stdout.trim()), Number(group.trim()));
  }
  const data = join(root, 'data');
  const logFile = join(root, 'server.log');
  await asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await closedPort();
  // Its socket lives in its own directory; fsync off: a throwaway cluster, and the machine never crashes
  // under it (an immediate stop still loses nothing that was committed).
  const options = ['-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-k', root, '-c', 'fsync=off', '-c', 'max_connections=200'].join(' ');
  let running = false;
  const start = async () => {
    await asPostgres(join(bin, 'pg_ctl'), ['start', '-D', data, '-w', '-t', '60', '-s', '-l', logFile, '-o', options]);
    running = true;
  };
  const stop = async (mode: 'immediate' | 'fast' = 'immediate') => {
    if (!running) return;
    await asPostgres(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', mode, '-w', '-t', '60', '-s']);
    running = false;
  };
  // A test process that dies without removing it leaves no server (nor its files) behind.
  const removeOnExit = () => {
    if (running) {
      try {
        execFileSync(...asPostgresCommand(join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-w', '-s']), { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', removeOnExit);
  await start();
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  // Ready for queries (pg_ctl -w waits for that too; one query makes sure).
  const probe = new pg.Client({ connectionString: url });
  await probe.connect();
  await probe.end();
  return {
    url,
    port,
    logFile,
    start,
    stop,
    remove: async () => {
      process.removeListener('exit', removeOnExit);
      await stop('fast').catch(() => stop('immediate'));
      await rm(root, { recursive: true, force: true });
    },
  };
}
