// The server SDK's `payments` command (packages/node/src/cli) as a developer runs it: its own process.
import { runScript } from './processes.ts';

export const CLI_MAIN = 'packages/node/src/cli/main.ts';

export type CliProcess = ReturnType<typeof runCli>;

/** `payments <args>` with `env` (PAYMENTS_API_KEY, PAYMENTS_BASE_URL) and nothing else of this process's environment. */
export function runCli(args: string[], env: Record<string, string> = {}) {
  const child = runScript('payments', CLI_MAIN, args, env);
  return {
    ...child,
    /** What it printed, a line each. */
    lines: () => child.output.stdout.split('\n').filter((line) => line !== ''),
  };
}
