// Preloaded into the API's process by the bench (`--import`): between "runtime-start" and "runtime-stop" over
// IPC it records the event loop's delay (perf_hooks' histogram, 10 ms resolution would hide what matters, so
// 1 ms) and every garbage collection's pause, so an open-model run can say what its tail latency is made of:
// a request that waits for the loop or for a collection waits for reasons no query plan explains. It also times
// every HTTP request the process serves, from its headers parsed to its response's last byte handed to the socket
// (Node's http diagnostics channels): what of a client's latency the API's own time is, and what is outside it (the
// load generator, the kernel, a process not scheduled).
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver, type EventLoopUtilization, performance } from 'node:perf_hooks';
import { answer } from './ipc.ts';

const NS_PER_MS = 1e6;
let loop: ReturnType<typeof monitorEventLoopDelay> | null = null;
let pauses: number[] = [];
let utilizationAtStart: EventLoopUtilization | null = null;
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push(entry.duration);
});

const requestStarts = new WeakMap<IncomingMessage, number>();
let requestTimes: number[] | null = null;
subscribe('http.server.request.start', (message) => {
  if (requestTimes !== null) requestStarts.set((message as { request: IncomingMessage }).request, performance.now());
});
subscribe('http.server.response.finish', (message) => {
  const started = requestStarts.get((message as { request: IncomingMessage }).request);
  if (started !== undefined && requestTimes !== null) requestTimes.push(performance.now() - started);
});

/** The value at `percent` of ascending `sorted` (0 when empty). */
const percentile = (sorted: number[], percent: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * percent) / 100))] ?? 0;

answer('runtime-start', () => {
  loop?.disable();
  loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  pauses = [];
  requestTimes = [];
  gcObserver.observe({ entryTypes: ['gc'] });
  utilizationAtStart = performance.eventLoopUtilization();
  return {};
});

answer('runtime-stop', () => {
  if (!loop || !utilizationAtStart) throw new Error('runtime-stop before runtime-start');
  loop.disable();
  gcObserver.disconnect();
  const sorted = [...pauses].sort((a, b) => a - b);
  const requests = (requestTimes ?? []).sort((a, b) => a - b);
  requestTimes = null;
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
      p99Ms: round(percentile(sorted, 99)),
      maxMs: round(sorted.at(-1) ?? 0),
    },
    requestMs: { count: requests.length, p50: round(percentile(requests, 50)), p99: round(percentile(requests, 99)), max: round(requests.at(-1) ?? 0) },
  };
  loop = null;
  return result;
});
