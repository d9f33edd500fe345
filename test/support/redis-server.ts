// A Redis server of the test's own (same binary as the machine's), so that a test can restart it, losing
// everything it held, without touching the Redis the other test files share.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { closedPort } from './stack.ts';

export interface OwnRedis {
  url: string;
  stop: () => Promise<void>;
  start: () => Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await closedPort();
  let child: ChildProcess | null = null;
  const start = async () => {
    // Nothing on disk: a restart is an empty Redis, as after a flush or a crash without persistence.
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let tries = 0; ; tries += 1) {
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined); // not up yet: connect() rejects, and we try again
      try {
        await probe.connect();
        await probe.ping();
        return;
      } catch (error) {
        if (tries > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        probe.disconnect();
      }
    }
  };
  // A test process that dies without stopping it leaves no server behind.
  const killOnExit = () => child?.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    const running = child;
    if (running === null) return;
    child = null;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}
