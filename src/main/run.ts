// Runs an entry point: known start-up failures become one line on stderr and exit code 1 (no stack trace);
// SIGTERM and SIGINT run the shutdown the entry point registered.
import { StartupError } from '../startup-error.ts';

type Shutdown = () => Promise<void>;

export function run(name: string, main: () => Promise<Shutdown | void>): void {
  main().then(
    (shutdown) => {
      if (!shutdown) return;
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`${name}: ${signal} received, shutting down\n`);
        shutdown().then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`${name}: shutdown failed: ${(error as Error).message}\n`);
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    },
    (error: unknown) => {
      process.stderr.write(error instanceof StartupError ? `${name}: error: ${(error as Error).message}\n` : `${name}: fatal: ${(error as Error).stack}\n`);
      process.exit(1);
    },
  );
}
