// BullMQ's own ceiling on this machine: `count` no-op jobs, added in bulk, then run by one Worker at
// `concurrency` against the same Redis (its own queue, under the run's prefix). Prints { perSecond }.
// The clock runs from the Worker's start to its last completion: the queue's cost per job and nothing else.
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';

const { redisUrl, prefix, count, concurrency } = JSON.parse(process.argv[2]!) as { redisUrl: string; prefix: string; count: number; concurrency: number };
const connection = { url: redisUrl };
const name = `bench-noop-${randomBytes(3).toString('hex')}`;
const queue = new Queue(name, { connection, prefix });
for (let start = 0; start < count; start += 1000) {
  await queue.addBulk(
    Array.from({ length: Math.min(1000, count - start) }, (_, offset) => ({
      name: 'noop',
      data: { index: start + offset },
      opts: { jobId: `noop-${start + offset}`, removeOnComplete: true },
    })),
  );
}
let done = 0;
const started = performance.now();
await new Promise<void>((resolve) => {
  const worker = new Worker(name, async () => undefined, { connection: { ...connection, maxRetriesPerRequest: null }, prefix, concurrency });
  worker.on('completed', () => {
    done += 1;
    if (done === count) void worker.close().then(resolve);
  });
});
const seconds = (performance.now() - started) / 1000;
await queue.obliterate({ force: true });
await queue.close();
process.stdout.write(`${JSON.stringify({ perSecond: count / seconds, seconds })}\n`);
