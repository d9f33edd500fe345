// A worker's periodic task (src/platform/queues/periodic.ts): the lines each run logs, even from services it
// calls through the shared logger, carry the task's name and that run's id, so one sweep can be followed; and
// the first run is at start, not an interval later.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger } from '../../src/platform/logger.ts';
import { runEvery } from '../../src/platform/queues/periodic.ts';

describe('a periodic task', () => {
  it('logs each run’s lines with the task’s name and one id per run, the failure line included', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    let runs = 0;
    const task = runEvery(
      1,
      async () => {
        runs += 1;
        logger.info('swept');
        await Promise.resolve();
        if (runs === 2) throw new Error('sweep broke');
        logger.info('swept again');
      },
      logger,
      'test sweep',
    );
    await vi.waitFor(() => expect(runs).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 5 });
    await task.stop();
    const runIds = lines.filter((line) => line['msg'] === 'swept').map((line) => line['runId']);
    const [first, second] = runIds.map((runId) => lines.filter((line) => line['runId'] === runId));
    expect(first!.map((line) => [line['msg'], line['task']])).toEqual([
      ['swept', 'test sweep'],
      ['swept again', 'test sweep'],
    ]);
    expect(second!.map((line) => line['msg'])).toEqual(['swept', 'test sweep failed; it runs again next interval']);
    expect(first![0]!['runId']).not.toBe(second![0]!['runId']);
  });

  it('runs once at start, not an interval later, and its stop waits for that run', async () => {
    const logger = createLogger('silent');
    let finish = () => {};
    const started: string[] = [];
    const task = runEvery(
      3_600_000,
      async () => {
        started.push('run');
        await new Promise<void>((resolve) => (finish = resolve));
        started.push('done');
      },
      logger,
      'hourly sweep',
    );
    onTestFinished(() => task.stop());
    await vi.waitFor(() => expect(started).toEqual(['run']), { timeout: 10_000, interval: 5 });
    const stopped = task.stop().then(() => started.push('stopped'));
    await Promise.resolve();
    expect(started).toEqual(['run']);
    finish();
    await stopped;
    expect(started).toEqual(['run', 'done', 'stopped']);
  });

  it('logs a task that throws before its first await as one that rejects, and runs it again', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    let runs = 0;
    const task = runEvery(
      1,
      (): Promise<void> => {
        runs += 1;
        throw new Error('broke at once');
      },
      logger,
      'eager sweep',
    );
    onTestFinished(() => task.stop());
    await vi.waitFor(() => expect(runs).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 5 });
    expect(lines[0]).toMatchObject({ task: 'eager sweep', msg: 'eager sweep failed; it runs again next interval', err: { message: 'broke at once' } });
  });
});
