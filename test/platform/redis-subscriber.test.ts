// The subscriber connection (src/platform/redis-subscriber.ts) of the live feed and the read cache: a SUBSCRIBE sent
// while ioredis is still in its connection handshake must not break the connection (ioredis refused its own ready
// check then, and the live feed lost its subscriptions now and then), and a dropped connection subscribes again.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../../src/platform/config.ts';
import { createSubscriberConnection } from '../../src/platform/redis-subscriber.ts';
import { testEnv } from '../support/api.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

const config = loadConfig(testEnv({ REDIS_PREFIX: `${inject('redisPrefix')}_subscriber` }));
const channel = `${config.REDIS_PREFIX}:${randomBytes(4).toString('hex')}`;
const publisher = new Redis(config.REDIS_URL);
let proxy: Awaited<ReturnType<typeof tcpProxy>>;

beforeAll(async () => {
  proxy = await tcpProxy(Number(new URL(config.REDIS_URL).port || 6379));
});
afterAll(async () => {
  publisher.disconnect();
  await proxy?.close();
});

it('subscribes in the middle of the connection handshake without an error, and again after the connection drops', async () => {
  const url = new URL(config.REDIS_URL);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const subscriber = createSubscriberConnection(url.href);
  const errors: Error[] = [];
  const messages: string[] = [];
  subscriber.on('error', (error: Error) => errors.push(error));
  subscriber.on('message', (_channel: string, message: string) => messages.push(message));
  try {
    // 'connect' is emitted once the socket is open and before the handshake's answers are in: the window in which
    // ioredis (5.8.2 and later, with its defaults) sends a SUBSCRIBE and then a ready check the server refuses.
    const subscribed = new Promise<unknown>((resolve, reject) => subscriber.once('connect', () => subscriber.subscribe(channel).then(resolve, reject)));
    await subscribed;
    await vi.waitFor(async () => expect(await publisher.publish(channel, 'first')).toBe(1));
    await vi.waitFor(() => expect(messages).toContain('first'));

    proxy.cut();
    await vi.waitFor(async () => expect(await publisher.publish(channel, 'second')).toBe(1), { timeout: 10_000 });
    await vi.waitFor(() => expect(messages).toContain('second'));
    expect(errors.map((error) => error.message)).toEqual([]);
  } finally {
    subscriber.disconnect();
  }
});
