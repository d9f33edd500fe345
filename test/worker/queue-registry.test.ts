// The one way a worker runs a queue's jobs (src/platform/queues/bullmq.ts): each job's data is parsed by
// its kind's schema before the handler sees it, so a job of another shape (written by hand, or by a version
// that disagreed) fails at once and is never processed (real Redis).
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { JobQueue, registerProcessor } from '../../src/platform/queues/bullmq.ts';
import { defineQueue } from '../../src/platform/queues/registry.ts';
import { testEnv } from '../support/api.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

const config = loadConfig(testEnv({ REDIS_PREFIX: `${inject('redisPrefix')}_registry` }));
const pings = defineQueue('registry-test', { ping: z.object({ n: z.number().int() }) });

describe('a registered processor', () => {
  const handled: number[] = [];
  const logger = createLogger('silent');
  const logged = vi.spyOn(logger, 'error');
  let worker: ReturnType<typeof registerProcessor>;
  // A plain BullMQ queue: it writes any data, as only a foreign or mistaken writer would.
  let raw: Queue;
  beforeAll(async () => {
    worker = registerProcessor(pings, { ping: async ({ n }) => void handled.push(n) }, { config, logger });
    raw = new Queue(pings.name, { connection: { url: config.REDIS_URL }, prefix: config.REDIS_PREFIX });
    await worker.waitUntilReady();
  });
  afterAll(async () => {
    await worker.close();
    await raw.obliterate({ force: true });
    await raw.close();
  });

  it('runs a job whose data matches its kind’s schema, with the parsed data', async () => {
    await raw.add('ping', { n: 7 }, { jobId: 'well-formed' });
    await vi.waitFor(async () => expect(await raw.getJobState('well-formed')).toBe('completed'), { timeout: 10_000, interval: 50 });
    expect(handled).toEqual([7]);
  });

  it('fails a job whose data its schema rejects without retrying or running it, and logs why', async () => {
    await raw.add('ping', { n: 'seven' }, { jobId: 'malformed', attempts: 5, backoff: { type: 'fixed', delay: 10 } });
    await vi.waitFor(async () => expect(await raw.getJobState('malformed')).toBe('failed'), { timeout: 10_000, interval: 50 });
    const job = await raw.getJob('malformed');
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toContain('does not match the schema');
    expect(handled).toEqual([7]);
    expect(logged).toHaveBeenCalledWith(expect.objectContaining({ queue: 'registry-test', jobName: 'ping', jobId: 'malformed' }), 'registry-test job failed');
  });

  it('fails a job of a kind the queue does not define', async () => {
    await raw.add('pong', { n: 1 }, { jobId: 'unknown-kind' });
    await vi.waitFor(async () => expect(await raw.getJobState('unknown-kind')).toBe('failed'), { timeout: 10_000, interval: 50 });
    expect((await raw.getJob('unknown-kind'))?.failedReason).toContain('no job kind named "pong"');
    expect(handled).toEqual([7]);
  });
});

describe('a job queue closed while its connection is still starting', () => {
  it('closes without an unhandled rejection (BullMQ 5.81 rejects a start cut short after dropping its handler)', async () => {
    const redis = new URL(config.REDIS_URL);
    const proxy = await tcpProxy(Number(redis.port || 6379));
    // The connection's start ends with BullMQ's INFO (the server's version), after ioredis's own (its ready
    // check); BullMQ's is held until close() has begun.
    const info = proxy.holdFrom(/\binfo\b/i, 2);
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      redis.hostname = '127.0.0.1';
      redis.port = String(proxy.port);
      const queue = new JobQueue(pings, { ...config, REDIS_URL: redis.href }, createLogger('silent'), {});
      await info.reached;
      const closed = queue.close();
      info.release();
      await closed;
      // A rejection left unhandled is reported once its turn's microtasks have run; let a few turns pass.
      for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', record);
      await proxy.close();
    }
    expect(unhandled).toEqual([]);
  });
});
