// The service's entry points run as real child processes (start-up, signals, a worker killed mid-job, an
// API killed mid-request, several APIs and workers sharing one database and one Redis).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { apiClient, testEnv, type ApiClient } from './api.ts';

const RUN_TYPESCRIPT = fileURLToPath(new URL('../../src/main/run-typescript.mjs', import.meta.url));

/** Every child still running, killed if this (test) process exits without stopping them. */
const running = new Set<() => void>();
process.once('exit', () => {
  for (const kill of running) kill();
});

export type EntryProcess = ReturnType<typeof runEntry>;

/** Runs `src/main/<entry>.ts` (the sandbox: its package's sandbox/src/main.ts) as its own process; `waitFor` resolves once stdout matches. */
export function runEntry(entry: string, env: Record<string, string>) {
  return runScript(entry, entry === 'sandbox' ? 'sandbox/src/main.ts' : `src/main/${entry}.ts`, [], env);
}

/** Runs the TypeScript `script` with `args` as its own process, called `entry` in errors (the CLI: packages/node/src/cli/main.ts). */
export function runScript(entry: string, script: string, args: string[], env: Record<string, string>) {
  // As the start scripts run them (package.json), so what is tested is what runs.
  const child = spawn(process.execPath, ['--import', RUN_TYPESCRIPT, script, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => ((output.stdout += chunk), listeners.forEach((listener) => listener())));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk));
  const killNow = () => child.kill('SIGKILL');
  running.add(killNow);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(killNow);
      resolve(code);
    }),
  );
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  return {
    entry,
    pid: child.pid!,
    output,
    exited,
    /** Whether the process is still running. */
    alive: () => !hasExited,
    waitFor: (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output.stdout);
          if (match) {
            listeners.delete(check);
            resolve(match);
          }
        };
        listeners.add(check);
        exited.then(() => reject(new Error(`${entry} exited before ${pattern}: ${output.stderr}`)));
        check();
      }),
    /**
     * SIGTERM, and the exit code. A process still running after `graceMs` is killed (null): a worker's
     * BullMQ close can wait forever after Redis restarted (docs/troubleshooting.md).
     */
    stop: async (graceMs = 20_000) => {
      if (hasExited) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(killNow, graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    /** No goodbye: the process dies where it stands, as on a power cut or an OOM kill. */
    kill: async () => {
      killNow();
      return exited;
    },
    /** The last lines it wrote, for a failing test's message. */
    tail: (lines = 20) => `${output.stdout}\n${output.stderr}`.trim().split('\n').slice(-lines).join('\n'),
  };
}

/** Process settings: logs at info or more (the entry points announce readiness there; kept in memory, not printed). */
const processEnv = (overrides: Record<string, string>) =>
  testEnv({ LOG_LEVEL: ['debug', 'trace'].includes(process.env.TEST_LOG_LEVEL ?? '') ? process.env.TEST_LOG_LEVEL! : 'info', ...overrides });

export interface ApiProcess extends ApiClient {
  process: EntryProcess;
}

/** An API process (`npm run start:api`) on a free port, once it listens; `overrides` go over testEnv. */
export async function startApiProcess(overrides: Record<string, string> = {}): Promise<ApiProcess> {
  // Port 0: the process binds a free port itself and logs it (a port found free here could be taken by
  // another test file before the child, still starting, binds it).
  const child = runEntry('api', processEnv({ ...overrides, PORT: '0' }));
  const [, url] = await child.waitFor(/"url":"([^"]+)","msg":"api listening"/);
  return { ...apiClient(url!), process: child };
}

/** A worker process (`npm run start:worker`), once it takes jobs; `overrides` go over testEnv. */
export async function startWorkerProcess(overrides: Record<string, string> = {}): Promise<EntryProcess> {
  const child = runEntry('worker', processEnv(overrides));
  await child.waitFor(/"msg":"worker running"/);
  return child;
}
