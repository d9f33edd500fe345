// The live feed's Redis connected but silent: each publication would wait in the API process for an answer that
// does not come, a payment's change or event at a time, without bound. Past MAX_UNANSWERED_PUBLICATIONS they are
// dropped instead, until Redis is heard from again, and the process's live streams end with a retryable error, as
// on a lost connection (those started meanwhile at once), so their clients subscribe again (with `after`) and
// catch up rather than missing what was dropped. The silence is a
// proxy that keeps its connections open and stops passing anything on, in front of a Redis of this test's own.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLiveFeed, MAX_UNANSWERED_PUBLICATIONS, type LiveFeed } from '../../src/api/live-feed.ts';
import { pushSideOf } from '../../src/kernel/async-streams.ts';
import type { WrittenEvent } from '../../src/modules/events/index.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { testEnv } from '../support/api.ts';
import { startOwnRedis, type OwnRedis } from '../support/redis-server.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';

let redis: OwnRedis;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let live: LiveFeed;

beforeAll(async () => {
  redis = await startOwnRedis();
  proxy = await tcpProxy(Number(new URL(redis.url).port));
  live = createLiveFeed(loadConfig(testEnv({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` })), createLogger('silent'));
});
afterAll(async () => {
  await live?.close();
  await proxy?.close();
  await redis?.stop();
});

describe('a live feed whose Redis stops answering', () => {
  it('drops publications past its bound and ends its live streams with a retryable error', async () => {
    const ended: unknown[] = [];
    const attach = pushSideOf<WrittenEvent>(live.events('mer_stalled', 'TEST'))!;
    attach({ next: () => undefined, end: (error) => ended.push(error) });
    await live.subscribed();
    // The publishing connection is up: a publication through it reaches Redis, and is answered.
    const event = { merchantId: 'mer_elsewhere', mode: 'TEST' } as WrittenEvent;
    const listener = new Redis(redis.url);
    try {
      await listener.psubscribe('*');
      const heard = new Promise((resolve) => listener.once('pmessage', resolve));
      live.eventCreated(event);
      await heard;
    } finally {
      listener.disconnect();
    }
    await vi.waitFor(() => expect(live.unansweredPublications()).toBe(0), { timeout: 10_000, interval: 20 });

    proxy.silence();
    for (let sent = 0; sent < MAX_UNANSWERED_PUBLICATIONS; sent += 1) live.eventCreated(event);
    // As many as the bound wait for their answers: the streams go on.
    await new Promise((resolve) => setImmediate(resolve));
    expect(live.unansweredPublications()).toBe(MAX_UNANSWERED_PUBLICATIONS);
    expect(ended).toEqual([]);

    live.eventCreated(event);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('not answering') });
    expect(live.unansweredPublications()).toBe(MAX_UNANSWERED_PUBLICATIONS);

    // A stream started while publications are dropped would miss them: it ends at once.
    const endedLater: unknown[] = [];
    pushSideOf<WrittenEvent>(live.events('mer_stalled', 'TEST'))!({ next: () => undefined, end: (error) => endedLater.push(error) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(endedLater).toMatchObject([{ code: 'SERVICE_UNAVAILABLE' }]);

    // Redis heard from again (its connections cut and made anew; what waited is sent again and answered): streams run.
    proxy.speak();
    proxy.cut();
    // ioredis reconnects (its first retry after 50 ms), then sends the 10,000 again: seconds on a busy machine.
    await vi.waitFor(() => expect(live.unansweredPublications()).toBe(0), { timeout: 20_000, interval: 50 });
    const runAgain: unknown[] = [];
    pushSideOf<WrittenEvent>(live.events('mer_stalled', 'TEST'))!({ next: () => undefined, end: (error) => runAgain.push(error) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(runAgain).toEqual([]);
  });
});
