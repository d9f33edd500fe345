// The recent authorization rates success-rate routing compares (src/modules/routing/success-rates.ts), on the
// real Redis, with two clients standing for two API processes.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRoutingSignals } from '../../src/modules/routing/index.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { testEnv } from '../support/api.ts';
import { deleteKeysUnder } from '../support/redis-keys.ts';

const config = loadConfig(testEnv({ REDIS_PREFIX: `${inject('redisPrefix')}_success_rates` }));
const first = new Redis(config.REDIS_URL);
const second = new Redis(config.REDIS_URL);
const rates = createRoutingSignals(first, config).successRates;
const otherProcessRates = createRoutingSignals(second, config).successRates;
const KEY = 'card:visa:EUR';

afterAll(async () => {
  await deleteKeysUnder(first, config.REDIS_PREFIX);
  first.disconnect();
  second.disconnect();
});

/** Records `outcomes` for `accountId` one after the other, oldest first. */
async function recordInOrder(accountId: string, outcomes: boolean[], key = KEY): Promise<void> {
  for (const authorized of outcomes) await rates.record(accountId, key, authorized);
}

describe('success rates', () => {
  it('count the newest outcomes of the window, fewer when there are fewer', async () => {
    const accountId = `ca_${randomUUID()}`;
    // 40 declines, then 30 authorizations: the newest 30 are all authorized.
    await recordInOrder(accountId, [...Array<boolean>(40).fill(false), ...Array<boolean>(30).fill(true)]);
    const over = async (windowSize: number) => (await rates.rates([accountId], KEY, windowSize)).get(accountId);
    expect(await over(10)).toEqual({ successes: 10, total: 10 });
    expect(await over(50)).toEqual({ successes: 30, total: 50 });
    expect(await over(100)).toEqual({ successes: 30, total: 70 });
  });

  it('keep each account and key apart, and know nothing of an account that has no outcome', async () => {
    const [visaOnly, both] = [`ca_${randomUUID()}`, `ca_${randomUUID()}`];
    await recordInOrder(visaOnly, [true, false, true]);
    await recordInOrder(both, [false]);
    await recordInOrder(both, [true, true], 'card:mastercard:EUR');
    expect(await rates.rates([visaOnly, both, 'ca_never_seen'], KEY, 100)).toEqual(
      new Map([
        [visaOnly, { successes: 2, total: 3 }],
        [both, { successes: 0, total: 1 }],
        ['ca_never_seen', { successes: 0, total: 0 }],
      ]),
    );
    expect(await rates.rates([both], 'card:mastercard:EUR', 100)).toEqual(new Map([[both, { successes: 2, total: 2 }]]));
    expect(await rates.rates([], KEY, 100)).toEqual(new Map());
  });

  it('keep the last 1000 outcomes, the largest window', async () => {
    const accountId = `ca_${randomUUID()}`;
    // 5 authorizations, then 1000 declines: the authorizations fall out.
    await recordInOrder(accountId, Array<boolean>(5).fill(true));
    await Promise.all(Array.from({ length: 1000 }, () => rates.record(accountId, KEY, false)));
    expect((await rates.rates([accountId], KEY, 1000)).get(accountId)).toEqual({ successes: 0, total: 1000 });
    expect(await first.llen(`${config.REDIS_PREFIX}:routing:sr:${accountId}:${KEY}`)).toBe(1000);
  });

  it('are the same for two processes, which lose no outcome recording at once', async () => {
    const accountId = `ca_${randomUUID()}`;
    // 200 interleaved: the first process records the authorizations, the second the declines, 3 of each 4 authorized.
    await Promise.all(
      Array.from({ length: 200 }, (_, index) => (index % 4 === 3 ? otherProcessRates.record(accountId, KEY, false) : rates.record(accountId, KEY, true))),
    );
    const expected = new Map([[accountId, { successes: 150, total: 200 }]]);
    expect(await rates.rates([accountId], KEY, 1000)).toEqual(expected);
    expect(await otherProcessRates.rates([accountId], KEY, 1000)).toEqual(expected);
  });
});
