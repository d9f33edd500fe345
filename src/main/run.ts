// Runs an entry point: known start-up failures become one line on stderr and exit code 1 (no stack trace);
// SIGTERM and SIGINT run the shutdown the entry point returns. The signals are caught from the start, so
// one that arrives while the entry point is still starting (after it logged "running", say) shuts down
// cleanly as soon as it has started, instead of killing the process half-way.
import { StartupError } from '../platform/startup-error.ts';

type Shutdown = () => Promise<void>;

export function run(name: string, main: () => Promise<Shutdown | void>): void {
  let shutdown: Shutdown | null = null;
  let requested: string | null = null;
  let stopping = false;

  const stop = () => {
    if (stopping || requested === null || shutdown === null) return;
    stopping = true;
    process.stderr.write(`${name}: ${requested} received, shutting down\n`);
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${name}: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      requested ??= signal;
      stop();
    });
  }

  main().then(
    (registered) => {
      // An entry point with nothing to shut down (a one-off command) exits on its own; a signal ends it now.
      shutdown = registered ?? (async () => {});
      stop();
    },
    (error: unknown) => {
      process.stderr.write(error instanceof StartupError ? `${name}: error: ${(error as Error).message}\n` : `${name}: fatal: ${(error as Error).stack}\n`);
      process.exit(1);
    },
  );
}
