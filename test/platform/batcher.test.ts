// Group commit for new payments, stored answers and the webhook worker's claims and records
// (src/platform/batcher.ts): what is submitted together runs as one batch, what comes while batches are in
// flight waits for the next, and a batch that fails is run again item by item, so one item's failure is its
// own, unless its failure is every item's (`runsAloneAfter`).
import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/platform/batcher.ts';

describe('a batcher', () => {
  it('runs the items submitted in one turn as one batch, each answered with its own output', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher(
      async (items: number[]) => {
        batches.push(items);
        return items.map((item) => item * 10);
      },
      { maxSize: 100, maxInFlight: 1 },
    );
    const outputs = await Promise.all([1, 2, 3].map((item) => batcher.submit(item)));
    expect(outputs).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('holds what comes while the batches in flight run, then sends it together, at most maxSize at a time', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (release = resolve));
    const batcher = new Batcher(
      async (items: number[]) => {
        batches.push(items);
        if (batches.length === 1) await first;
        return items;
      },
      { maxSize: 2, maxInFlight: 1 },
    );
    const answers = [batcher.submit(1)];
    await new Promise((resolve) => setImmediate(resolve));
    answers.push(batcher.submit(2), batcher.submit(3), batcher.submit(4));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    release();
    expect(await Promise.all(answers)).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });

  it('runs a failed batch again item by item: only the failing item is rejected', async () => {
    const batches: string[][] = [];
    const batcher = new Batcher(
      async (items: string[]) => {
        batches.push(items);
        if (items.includes('bad')) throw new Error('deadlock detected');
        return items.map((item) => item.toUpperCase());
      },
      { maxSize: 100, maxInFlight: 2 },
    );
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((item) => batcher.submit(item)));
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).message))).toEqual(['A', 'deadlock detected', 'C']);
    expect(batches).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('gives every item the failure of a batch that runsAloneAfter says is not one item’s, running none again', async () => {
    const batches: string[][] = [];
    const lost = new Error('Connection terminated unexpectedly');
    const batcher = new Batcher(
      async (items: string[]) => {
        batches.push(items);
        throw lost;
      },
      { maxSize: 100, maxInFlight: 2, runsAloneAfter: (error) => error !== lost },
    );
    const results = await Promise.allSettled(['a', 'b', 'c'].map((item) => batcher.submit(item)));
    expect(results).toEqual(Array(3).fill({ status: 'rejected', reason: lost }));
    expect(batches).toEqual([['a', 'b', 'c']]);
  });
});
