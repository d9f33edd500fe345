// drain (src/kernel/async-streams.ts): the plumbing of every iterated live stream. Stopped while it hands a value
// on, it asks its source for nothing more: a next() nobody awaits would reject unobserved when the source fails,
// and an unhandled rejection ends the process.
import { describe, expect, it } from 'vitest';
import { drain } from '../../src/kernel/async-streams.ts';

describe('drain', () => {
  it('asks for no next value once stopped while taking one, and returns the source', async () => {
    let asked = 0;
    let returned = false;
    const source: AsyncIterator<number> = {
      next: () => {
        asked += 1;
        return asked === 1 ? Promise.resolve({ done: false, value: 1 }) : Promise.reject(new Error('the feed is gone'));
      },
      return: async () => {
        returned = true;
        return { done: true, value: undefined };
      },
    };
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const taken: number[] = [];
    await drain(source, stopped, async (value) => {
      taken.push(value);
      stop();
      await stopped;
    });
    expect(taken).toEqual([1]);
    expect(asked).toBe(1);
    expect(returned).toBe(true);
  });

  it('ends when stopped while a next() waits, and passes on a failing source’s error', async () => {
    let returned = 0;
    const waiting: AsyncIterator<number> = {
      next: () => new Promise(() => {}),
      return: async () => ((returned += 1), { done: true, value: undefined }),
    };
    await drain(waiting, Promise.resolve(), () => {});
    expect(returned).toBe(1);
    const failing: AsyncIterator<number> = {
      next: () => Promise.reject(new Error('the feed is gone')),
      return: async () => ((returned += 1), { done: true, value: undefined }),
    };
    await expect(drain(failing, new Promise(() => {}), () => {})).rejects.toThrow('the feed is gone');
    expect(returned).toBe(2);
  });
});
