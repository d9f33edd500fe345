// Preloaded into a process whose memory the bench measures (`--import`, with `--expose-gc`): on "memory"
// over IPC it runs full garbage collections and answers process.memoryUsage(), so a before/after difference
// is live memory rather than garbage not yet collected. With BENCH_HEAP_SNAPSHOT_DIR set, each reading also
// writes a heap snapshot there, to compare with bench/tools/heap-diff.ts (docs/benchmarks.md, "Profiling").
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { answer } from './ipc.ts';

const snapshotDir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
let readings = 0;

answer('memory', async () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let round = 0; round < 3; round += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const memory = process.memoryUsage();
  if (snapshotDir) {
    mkdirSync(snapshotDir, { recursive: true });
    writeHeapSnapshot(join(snapshotDir, `${process.pid}-${++readings}.heapsnapshot`));
  }
  return { memory, collected: gc !== undefined };
});
