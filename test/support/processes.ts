// The service's entry points run as real child processes (start-up, signals, a worker killed mid-job).
import { spawn } from 'node:child_process';

/** Runs `src/main/<entry>.ts` as its own process; `waitFor` resolves once stdout matches. */
export function runEntry(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', `src/main/${entry}.ts`], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => ((output.stdout += chunk), listeners.forEach((listener) => listener())));
  child.stderr.on('data', (chunk: Buffer) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return {
    output,
    exited,
    waitFor: (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output.stdout);
          if (match) (listeners.delete(check), resolve(match));
        };
        listeners.add(check);
        exited.then(() => reject(new Error(`exited before ${pattern}: ${output.stderr}`)));
        check();
      }),
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
    /** No goodbye: the process dies where it stands, as on a power cut or an OOM kill. */
    kill: async () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

