// What grew between two V8 heap snapshots (from BENCH_HEAP_SNAPSHOT_DIR, docs/benchmarks.md "Profiling"): self
// size and count per constructor, largest growth first. `npx tsx bench/tools/heap-diff.ts before.heapsnapshot after.heapsnapshot [rows]`
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

function sizesByConstructor(file: string): Map<string, { size: number; count: number }> {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const [typeField, nameField, sizeField] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field)) as [number, number, number];
  const types = heap.snapshot.meta.node_types[0];
  const totals = new Map<string, { size: number; count: number }>();
  for (let offset = 0; offset < heap.nodes.length; offset += fields.length) {
    const type = types[heap.nodes[offset + typeField]!]!;
    // Objects by constructor; strings, code, closures and the rest by their kind.
    const name = type === 'object' || type === 'closure' ? `${type} ${heap.strings[heap.nodes[offset + nameField]!]}` : `(${type})`;
    const total = totals.get(name) ?? { size: 0, count: 0 };
    total.size += heap.nodes[offset + sizeField]!;
    total.count += 1;
    totals.set(name, total);
  }
  return totals;
}

const [beforeFile, afterFile, rowsArg] = process.argv.slice(2);
if (!beforeFile || !afterFile) throw new Error('usage: heap-diff <before.heapsnapshot> <after.heapsnapshot> [rows]');
const before = sizesByConstructor(beforeFile);
const after = sizesByConstructor(afterFile);
const growth = [...after].map(([name, { size, count }]) => ({
  name,
  size: size - (before.get(name)?.size ?? 0),
  count: count - (before.get(name)?.count ?? 0),
}));
growth.sort((a, b) => b.size - a.size);
const total = growth.reduce((sum, row) => sum + row.size, 0);
console.log(`grew ${(total / 1e6).toFixed(1)} MB of self size`);
for (const row of growth.slice(0, Number(rowsArg ?? 40)))
  console.log(`${(row.size / 1e6).toFixed(2).padStart(8)} MB ${String(row.count).padStart(8)}  ${row.name}`);
