// Preloaded into the API's process by the bench (`--import`): between "runtime-start" and "runtime-stop" over
// IPC it records the event loop's delay (perf_hooks' histogram, 10 ms resolution would hide what matters, so
// 1 ms) and every garbage collection's pause, so an open-model run can say what its tail latency is made of:
// a request that waits for the loop or for a collection waits for reasons no query plan explains.
import { monitorEventLoopDelay, PerformanceObserver, type EventLoopUtilization, performance } from 'node:perf_hooks';
import { answer } from './ipc.ts';

const NS_PER_MS = 1e6;
let loop: ReturnType<typeof monitorEventLoopDelay> | null = null;
let pauses: number[] = [];
let utilizationAtStart: EventLoopUtilization | null = null;
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push(entry.duration);
});

answer('runtime-start', () => {
  loop?.disable();
  loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  pauses = [];
  gcObserver.observe({ entryTypes: ['gc'] });
  utilizationAtStart = performance.eventLoopUtilization();
  return {};
});

answer('runtime-stop', () => {
  if (!loop || !utilizationAtStart) throw new Error('runtime-stop before runtime-start');
  loop.disable();
  gcObserver.disconnect();
  const sorted = [...pauses].sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  const result = {
    eventLoopDelayMs: {
      p50: round(loop.percentile(50) / NS_PER_MS),
      p99: round(loop.percentile(99) / NS_PER_MS),
      max: round(loop.max / NS_PER_MS),
    },
    eventLoopUtilization: round(performance.eventLoopUtilization(utilizationAtStart).utilization),
    gc: {
      pauses: sorted.length,
      totalMs: round(sorted.reduce((sum, pause) => sum + pause, 0)),
      p99Ms: round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0),
      maxMs: round(sorted.at(-1) ?? 0),
    },
  };
  loop = null;
  return result;
});
