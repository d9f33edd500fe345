// The service as it runs in production, for the fault scenarios: API and worker processes (real child
// processes, which a test may kill) on one PostgreSQL database and one Redis prefix, calling the sandbox
// processor over HTTP, optionally through a tap that records (and can hold) what the processor was asked.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { startSandbox, type SandboxOptions } from '../../sandbox/src/server.ts';
import { ownDatabase } from './database.ts';
import { startApiProcess, startWorkerProcess, type ApiProcess, type EntryProcess } from './processes.ts';
import { startProcessorTap, type ProcessorTap } from './processor-tap.ts';
import type { StackLike } from './stack.ts';

export interface ProcessStackOptions {
  apis?: number;
  workers?: number;
  /** Settings of every process, over testEnv (the database, Redis prefix and sandbox URL are the stack's). */
  env?: Record<string, string>;
  /** A database to use (migrated); by default the stack creates one of its own and drops it at close. */
  databaseUrl?: string;
  /** Put a ProcessorTap between the processes and the sandbox. */
  tap?: boolean;
  sandbox?: Omit<SandboxOptions, 'port'>;
}

export interface ProcessStack extends StackLike {
  /** The first API process. */
  api: ApiProcess;
  apis: ApiProcess[];
  workers: EntryProcess[];
  /** The settings the processes run with (over testEnv), to start more of them. */
  env: Record<string, string>;
  databaseUrl: string;
  /** Where the sandbox itself listens (its own view of payments is the processor's truth). */
  sandboxUrl: string;
  tap: ProcessorTap | null;
  startApi: () => Promise<ApiProcess>;
  startWorker: () => Promise<EntryProcess>;
  /** Stops every process still running (a worker that hangs on SIGTERM is killed after a grace period), then the rest. */
  close: () => Promise<void>;
}

export async function startProcessStack(options: ProcessStackOptions = {}): Promise<ProcessStack> {
  const database = options.databaseUrl ? null : await ownDatabase();
  const databaseUrl = options.databaseUrl ?? database!.url;
  const sandbox = await startSandbox({ port: 0, ...options.sandbox });
  const tap = options.tap ? await startProcessorTap(sandbox.url) : null;
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: `${inject('redisPrefix')}_${randomBytes(3).toString('hex')}`,
    SANDBOX_URL: tap?.url ?? sandbox.url,
    ...options.env,
  };
  const apis: ApiProcess[] = [];
  const workers: EntryProcess[] = [];
  const startApi = async () => {
    const api = await startApiProcess(env);
    apis.push(api);
    return api;
  };
  const startWorker = async () => {
    const worker = await startWorkerProcess(env);
    workers.push(worker);
    return worker;
  };
  const close = async () => {
    await Promise.all([...workers, ...apis.map((api) => api.process)].map((child) => child.stop(10_000)));
    await tap?.close();
    await sandbox.close();
    await database?.drop();
  };
  try {
    await Promise.all([...Array.from({ length: options.apis ?? 1 }, startApi), ...Array.from({ length: options.workers ?? 0 }, startWorker)]);
  } catch (error) {
    await close();
    throw error;
  }
  return { api: apis[0]!, apis, workers, env, databaseUrl, sandboxUrl: sandbox.url, tap, startApi, startWorker, close };
}
