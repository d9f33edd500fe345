// Summarizes a V8 .cpuprofile (from BENCH_CPU_PROF_DIR, docs/benchmarks.md "Profiling"): self time per package
// (node_modules/<name>), per file of ours, Node's core, GC and idle, as shares of the busy time, then the top functions.
// With fromS and toS, only the samples taken that many seconds into the profile: a warm process's steady load rather
// than its start-up (the busy time of each second is printed first, to find the window).
//   npx tsx bench/tools/profile-summary.ts <file.cpuprofile> [rows] [fromS toS]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, one of our files, Node's core, or V8's own (GC, idle, program). */
function placeOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'anonymous'})`;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  if (url.startsWith('node:')) return 'node core';
  const ours = /\/(src|sandbox|packages|bench)\/(.*)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

const [file, rowsArg, fromArg, toArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [rows] [fromS toS]');
const rows = Number(rowsArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
/** V8's idle node: time the thread waited, counted in no busy figure. */
const isIdle = (id: number) => byId.get(id)!.callFrame.functionName === '(idle)';
const selfTime = new Map<number, number>();
const fromMicros = fromArg === undefined ? -Infinity : Number(fromArg) * 1e6;
const toMicros = toArg === undefined ? Infinity : Number(toArg) * 1e6;
const busyPerSecond: number[] = [];
let elapsed = 0;
profile.samples.forEach((id, index) => {
  const micros = profile.timeDeltas[index] ?? 0;
  elapsed += micros;
  const second = Math.floor(elapsed / 1e6);
  if (!isIdle(id)) busyPerSecond[second] = (busyPerSecond[second] ?? 0) + micros;
  if (elapsed >= fromMicros && elapsed <= toMicros) selfTime.set(id, (selfTime.get(id) ?? 0) + micros);
});

const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
/** Node's core and V8's builtins counted to the nearest caller that is a package or ours: whose work it is. */
function ownerOf(id: number): string {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const { url, functionName } = byId.get(at)!.callFrame;
    const place = placeOf(url, functionName);
    if (place !== 'node core' && !place.startsWith('(')) return place;
  }
  return placeOf(byId.get(id)!.callFrame.url, byId.get(id)!.callFrame.functionName);
}

const places = new Map<string, number>();
const owners = new Map<string, number>();
const functions = new Map<string, number>();
let busy = 0;
for (const [id, micros] of selfTime) {
  const { callFrame } = byId.get(id)!;
  if (isIdle(id)) continue;
  const place = placeOf(callFrame.url, callFrame.functionName);
  busy += micros;
  places.set(place, (places.get(place) ?? 0) + micros);
  const owner = ownerOf(id);
  owners.set(owner, (owners.get(owner) ?? 0) + micros);
  const name = `${callFrame.functionName || '(anonymous)'} ${place}:${callFrame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + micros);
}
const share = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)} %`;
const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, rows);
console.log(`busy ms in each second: ${busyPerSecond.map((micros, second) => `${second}:${Math.round(micros / 1000)}`).join(' ')}`);
const window = fromArg === undefined ? '' : ` (from ${fromArg} s to ${toArg ?? 'the end'})`;
console.log(`busy ${(busy / 1e6).toFixed(2)} s of ${(profile.timeDeltas.reduce((a, b) => a + b, 0) / 1e6).toFixed(2)} s${window}`);
console.log('\nself time by place');
for (const [place, micros] of top(places)) console.log(`${share(micros)}  ${place}`);
console.log('\nself time by owner (core and builtins counted to their nearest caller that is a package or ours)');
for (const [owner, micros] of top(owners)) console.log(`${share(micros)}  ${owner}`);
console.log('\nself time by function');
for (const [name, micros] of top(functions)) console.log(`${share(micros)}  ${name}`);
