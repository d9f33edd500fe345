// What the figures were measured on: they mean little without it.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { ROOT } from './processes.ts';

const run = (command: string, args: string[]) => {
  try {
    return execFileSync(command, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
};

const loadAverage = () => os.loadavg().map((value) => Math.round(value * 100) / 100);

/** `stores` is null when only pure parts run: no database or Redis was started to ask. */
export async function machineInfo(stores: { sql: pg.Pool; redis: Redis } | null, pgbench: string) {
  const postgres = stores ? (await stores.sql.query<{ version: string }>('SELECT version()')).rows[0]!.version.split(' on ')[0]! : 'PostgreSQL not started';
  const redisVersion = stores ? (/redis_version:(\S+)/.exec(await stores.redis.info('server'))?.[1] ?? 'unknown') : 'not started';
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres,
    redis: redisVersion,
    pgbench: run(pgbench, ['--version']),
    gitCommit: run('git', ['rev-parse', 'HEAD']),
    gitDirty: run('git', ['status', '--porcelain']) !== '',
    loadAverageAtStart: loadAverage(),
    loadAverageAtEnd: [] as number[],
  };
}

export type MachineInfo = Awaited<ReturnType<typeof machineInfo>>;

export function finishMachineInfo(info: MachineInfo): void {
  info.loadAverageAtEnd = loadAverage();
}
