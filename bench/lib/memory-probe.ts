// Preloaded into a process whose memory the bench measures (`--import`, with `--expose-gc`): on "memory"
// over IPC it runs full garbage collections and answers process.memoryUsage(), so a before/after difference
// is live memory rather than garbage not yet collected.
import { answer } from './ipc.ts';

answer('memory', async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let round = 0; round < 3; round += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { memory: process.memoryUsage(), collected: gc !== undefined };
});
