// Child processes of a bench run: the service's own entry points (src/main/*.ts) and the bench's helpers
// (bench/processes/*.ts), each a real Node process talking over sockets. Every child is registered so that
// `stopAll` (and, as a last resort, this process's exit) ends each one by its pid, whatever failed.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The repository's root: children run there, so `tsx` and the packages resolve as for `npm run`. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const TAIL_BYTES = 16_384;
/** USER_HZ: the unit of /proc/<pid>/stat times, 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
const running = new Set<Child>();

/**
 * The CPU time every process of the machine has used since boot (ms, /proc/stat): user, nice, system, irq and
 * softirq, not idle, iowait, or steal (time the hypervisor gave another machine).
 */
export function machineCpuMs(): number {
  const [, user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).map(Number);
  return ((user! + nice! + system! + irq! + softirq!) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Where a process's memory probe writes heap snapshots (bench/lib/memory-probe.ts), a folder per process, when BENCH_HEAP_SNAPSHOT_DIR is set. */
function heapSnapshotEnv(name: string): Record<string, string> {
  const dir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  return dir ? { BENCH_HEAP_SNAPSHOT_DIR: `${dir}/${name.replace(/[^\w.-]+/g, '-')}` } : {};
}

export interface StartOptions {
  /** The child's whole environment, beside PATH (nothing else of this process's environment leaks in). */
  env?: Record<string, string>;
  /** Arguments after the script. */
  args?: string[];
  /** Modules loaded before the script (`--import`), after the service's TypeScript loader (src/main/run-typescript.mjs). */
  preload?: string[];
  /** Open an IPC channel (the child answers `request`s). */
  ipc?: boolean;
  /** Node's own flags (`--expose-gc`). */
  nodeFlags?: string[];
  /** Keep all of stdout (a helper's result), not only its tail. */
  fullOutput?: boolean;
}

export class Child {
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  private stdout = '';
  private stderr = '';
  private readonly listeners = new Set<() => void>();
  private nextRequestId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    readonly name: string,
    script: string,
    options: StartOptions = {},
  ) {
    const preload = ['./src/main/run-typescript.mjs', ...(options.preload ?? [])].flatMap((module) => ['--import', module]);
    this.process = spawn(process.execPath, [...(options.nodeFlags ?? []), ...preload, script, ...(options.args ?? [])], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...heapSnapshotEnv(name), ...options.env },
      stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    });
    running.add(this);
    this.process.stdout!.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
      if (!options.fullOutput && this.stdout.length > TAIL_BYTES * 4) this.stdout = this.stdout.slice(-TAIL_BYTES * 4);
      for (const listener of this.listeners) listener();
    });
    this.process.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-TAIL_BYTES);
    });
    this.process.on('message', (message: { id?: number; error?: string }) => {
      const waiting = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id!);
      if (message.error) waiting.reject(new Error(`${this.name}: ${message.error}`));
      else waiting.resolve(message);
    });
    this.exited = new Promise((resolve) => {
      // 'close', not 'exit': by then stdout has been read to its end.
      this.process.on('close', (code, signal) => {
        running.delete(this);
        for (const { reject } of this.pending.values()) reject(new Error(`${this.name} exited (${code ?? signal})`));
        this.pending.clear();
        for (const listener of this.listeners) listener();
        resolve(code);
      });
    });
  }

  get pid(): number {
    return this.process.pid!;
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** The last lines the child wrote, for an error message. */
  tail(): string {
    return `--- ${this.name} stdout (tail) ---\n${this.stdout.slice(-4000)}\n--- ${this.name} stderr (tail) ---\n${this.stderr.slice(-4000)}`;
  }

  output(): string {
    return this.stdout;
  }

  /** Resolves with the first match of `pattern` in stdout; rejects if the child exits or `timeoutMs` passes first. */
  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`${this.name}: no ${pattern} within ${timeoutMs} ms\n${this.tail()}`)), timeoutMs);
      const finish = (error: Error | null, match?: RegExpExecArray) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        if (error) reject(error);
        else resolve(match!);
      };
      const check = () => {
        const match = pattern.exec(this.stdout);
        if (match) finish(null, match);
        else if (!this.alive) finish(new Error(`${this.name} exited before ${pattern}\n${this.tail()}`));
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Sends `{ type, ...payload }` over IPC and resolves with the child's answer (same id). */
  request<T = Record<string, unknown>>(type: string, payload: Record<string, unknown> = {}, timeoutMs = 120_000): Promise<T> {
    const id = this.nextRequestId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}: no answer to ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value as T)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      this.process.send!({ id, type, ...payload });
    });
  }

  /** SIGTERM (the entry points shut down cleanly), then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.alive) return;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Live memory in MB after full collections (a child preloaded with memory-probe.ts and --expose-gc). */
  async memoryMb(): Promise<{ rss: number; heapUsed: number; external: number }> {
    const { memory, collected } = await this.request<{ memory: NodeJS.MemoryUsage; collected: boolean }>('memory');
    if (!collected) throw new Error(`${this.name}: started without --expose-gc`);
    const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
    return { rss: mb(memory.rss), heapUsed: mb(memory.heapUsed), external: mb(memory.external) };
  }

  /** CPU time (user + system) the process has used so far, in ms, from /proc (Linux; 10 ms resolution). */
  cpuMs(): number {
    const { userMs, systemMs } = this.cpuTimesMs();
    return userMs + systemMs;
  }

  /** The process's CPU time so far in its own code (user) and in the kernel on its behalf (system: its system calls), in ms. */
  cpuTimesMs(): { userMs: number; systemMs: number } {
    const stat = readFileSync(`/proc/${this.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (ticks: string | undefined) => (Number(ticks) * 1000) / CLOCK_TICKS_PER_SECOND;
    return { userMs: ms(fields[11]), systemMs: ms(fields[12]) };
  }

  /** Resident memory in MB, from /proc (Linux). */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
    return kb / 1024;
  }
}

/** Runs a helper to completion and parses the last line of its stdout as JSON (its result). */
export async function runToCompletion<T>(name: string, script: string, options: StartOptions = {}): Promise<T> {
  const child = new Child(name, script, { ...options, fullOutput: true });
  const code = await child.exited;
  if (code !== 0) throw new Error(`${name} exited with ${code}\n${child.tail()}`);
  const lines = child.output().trim().split('\n');
  return JSON.parse(lines.at(-1)!) as T;
}

/** Stops every child still running, each by its pid; used in the runner's `finally`. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.stop(5_000)));
}

// Whatever happens to this process, its children do not outlive it.
process.on('exit', () => {
  for (const child of running) child.process.kill('SIGKILL');
});

/** A TCP port nothing listens on now (taken from the OS, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `url` until it answers 200 (a server that has started), or fails after `timeoutMs`. */
export async function waitForHttp(url: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!child.alive) throw new Error(`${child.name} exited while starting\n${child.tail()}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name}: ${url} did not answer within ${timeoutMs} ms\n${child.tail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
