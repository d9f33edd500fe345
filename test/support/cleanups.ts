// Cleanups a test registers as it starts things (processes, servers, databases), run after it in reverse
// order, each even when one before it failed, so that a failing test leaves nothing running.
import { afterEach } from 'vitest';

export type Defer = (cleanup: () => Promise<unknown> | unknown) => void;

/** Registers an afterEach (or the given hook) that runs what was deferred; returns `defer`. */
export function deferredCleanups(hook: (run: () => Promise<void>) => void = (run) => afterEach(run, 120_000)): Defer {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  hook(async () => {
    const errors: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  });
  return (cleanup) => void cleanups.push(cleanup);
}
