// The connector accounts' circuit breakers (src/modules/routing/health.ts) on the real Redis: every transition
// at explicit times (no sleeps), and two clients standing for two API processes sharing one state.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createRoutingSignals, type CircuitState, type ConnectorHealth } from '../../src/modules/routing/index.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { testEnv } from '../support/api.ts';
import { deleteKeysUnder } from '../support/redis-keys.ts';

const config = loadConfig(
  testEnv({
    REDIS_PREFIX: `${inject('redisPrefix')}_health`,
    ROUTING_CIRCUIT_FAILURES: '3',
    ROUTING_CIRCUIT_WINDOW_MS: '10000',
    ROUTING_CIRCUIT_COOLDOWN_MS: '5000',
  }),
);
// Two connections: two API processes.
const first = new Redis(config.REDIS_URL);
const second = new Redis(config.REDIS_URL);
const health = createRoutingSignals(first, config).health;
const otherProcessHealth = createRoutingSignals(second, config).health;

afterAll(async () => {
  await deleteKeysUnder(first, config.REDIS_PREFIX);
  first.disconnect();
  second.disconnect();
});

type Step = { at: number; record: 'success' | 'failure'; returns: CircuitState } | { at: number; claimProbe: boolean } | { at: number; state: CircuitState };

async function run(circuits: ConnectorHealth, accountId: string, step: Step): Promise<unknown> {
  if ('record' in step) return circuits.record(accountId, step.record, step.at);
  if ('claimProbe' in step) return circuits.claimProbe(accountId, step.at);
  return (await circuits.states([accountId], step.at)).get(accountId);
}

function expected(step: Step): unknown {
  return 'record' in step ? step.returns : 'claimProbe' in step ? step.claimProbe : step.state;
}

// Settings: 3 failures within 10 s open the circuit for 5 s. Opened at 2000 below, so open until 7000.
const OPENED_AT_2000: Step[] = [
  { at: 0, record: 'failure', returns: 'closed' },
  { at: 1000, record: 'failure', returns: 'closed' },
  { at: 2000, record: 'failure', returns: 'open' },
];

/** Opens `accountId`'s circuit at `at` (open until at + 5000), as OPENED_AT_2000 does at 2000. */
async function openAt(accountId: string, at: number): Promise<void> {
  for (const step of OPENED_AT_2000) if ('record' in step) await health.record(accountId, step.record, step.at - 2000 + at);
}

const TRANSITIONS: [string, Step[]][] = [
  [
    'closed → open after 3 failures within the window',
    [{ at: 0, state: 'closed' }, ...OPENED_AT_2000, { at: 2000, state: 'open' }, { at: 2000, claimProbe: false }],
  ],
  [
    'failures a window old or older do not count',
    [
      { at: 0, record: 'failure', returns: 'closed' },
      { at: 5000, record: 'failure', returns: 'closed' },
      // The window is (0, 10000]: the failure at 0 has left it.
      { at: 10_000, record: 'failure', returns: 'closed' },
      { at: 10_001, record: 'failure', returns: 'open' },
    ],
  ],
  [
    'an answer between failures does not hide them (a decline is an answer; the window counts failures)',
    [
      { at: 0, record: 'failure', returns: 'closed' },
      { at: 100, record: 'success', returns: 'closed' },
      { at: 200, record: 'failure', returns: 'closed' },
      { at: 300, record: 'failure', returns: 'open' },
    ],
  ],
  [
    'open → half-open at exactly openUntil',
    [...OPENED_AT_2000, { at: 6999, state: 'open' }, { at: 6999, claimProbe: false }, { at: 7000, state: 'half_open' }],
  ],
  [
    'late outcomes of calls made before it opened change nothing while open',
    [...OPENED_AT_2000, { at: 3000, record: 'success', returns: 'open' }, { at: 3000, record: 'failure', returns: 'open' }, { at: 7000, state: 'half_open' }],
  ],
  [
    'half-open: the probe’s success closes it, and counting starts again',
    [
      ...OPENED_AT_2000,
      { at: 7000, claimProbe: true },
      { at: 7000, state: 'half_open' },
      { at: 7100, record: 'success', returns: 'closed' },
      { at: 7100, state: 'closed' },
      { at: 7200, claimProbe: false },
      { at: 7200, record: 'failure', returns: 'closed' },
      { at: 7300, record: 'failure', returns: 'closed' },
      { at: 7400, record: 'failure', returns: 'open' },
    ],
  ],
  [
    'half-open: the probe’s failure opens it for another cool-down, after which a new probe may go',
    [
      ...OPENED_AT_2000,
      { at: 7000, claimProbe: true },
      { at: 7100, record: 'failure', returns: 'open' },
      { at: 12_099, state: 'open' },
      { at: 12_099, claimProbe: false },
      { at: 12_100, state: 'half_open' },
      { at: 12_100, claimProbe: true },
      { at: 12_200, record: 'success', returns: 'closed' },
    ],
  ],
  [
    'a probe that never settles (its process died) lets another caller probe a cool-down later',
    [...OPENED_AT_2000, { at: 7000, claimProbe: true }, { at: 11_999, claimProbe: false }, { at: 12_000, claimProbe: true }, { at: 12_000, claimProbe: false }],
  ],
];

describe('a connector account’s circuit', () => {
  it.each(TRANSITIONS)('%s', async (_, steps) => {
    const accountId = `ca_${randomUUID()}`;
    // Steps alternate between the two processes: each sees what the other recorded.
    const outcomes = [];
    for (const [index, step] of steps.entries()) outcomes.push(await run(index % 2 === 0 ? health : otherProcessHealth, accountId, step));
    expect(outcomes).toEqual(steps.map(expected));
  });

  it('gives the states of many accounts at once, each its own', async () => {
    const [closed, open, halfOpen] = [`ca_${randomUUID()}`, `ca_${randomUUID()}`, `ca_${randomUUID()}`];
    await health.record(closed, 'failure', 0);
    await openAt(open, 2000);
    await openAt(halfOpen, -3000);
    expect(await otherProcessHealth.states([closed, open, halfOpen, 'ca_never_seen'], 2000)).toEqual(
      new Map([
        [closed, 'closed'],
        [open, 'open'],
        [halfOpen, 'half_open'],
        ['ca_never_seen', 'closed'],
      ]),
    );
    expect(await health.states([], 0)).toEqual(new Map());
  });

  it('gives exactly one of 20 concurrent callers, across two processes, the probe of a half-open account', async () => {
    const accountId = `ca_${randomUUID()}`;
    await openAt(accountId, 2000);
    const claims = await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? health : otherProcessHealth).claimProbe(accountId, 7000)));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('loses no failure to concurrent records from two processes, and opens once', async () => {
    const threshold = 200;
    const settings = { ...config, ROUTING_CIRCUIT_FAILURES: threshold, ROUTING_CIRCUIT_WINDOW_MS: 60_000 };
    const [one, other] = [createRoutingSignals(first, settings).health, createRoutingSignals(second, settings).health];
    const accountId = `ca_${randomUUID()}`;
    const returns = await Promise.all(
      Array.from({ length: threshold }, (_, index) => (index % 2 === 0 ? one : other).record(accountId, 'failure', 1000 + (index % 7))),
    );
    // Only the 200th failure counted opens it: a lost count would leave it closed, a race would open it twice.
    expect(returns.filter((state) => state === 'open')).toHaveLength(1);
    expect(returns.filter((state) => state === 'closed')).toHaveLength(threshold - 1);
    expect((await other.states([accountId], 1010)).get(accountId)).toBe('open');
  });

  it('takes its settings from the configuration, 5 failures in 30 s opening it for 30 s by default', async () => {
    const defaults = loadConfig(testEnv({ REDIS_PREFIX: config.REDIS_PREFIX }));
    expect([defaults.ROUTING_CIRCUIT_FAILURES, defaults.ROUTING_CIRCUIT_WINDOW_MS, defaults.ROUTING_CIRCUIT_COOLDOWN_MS]).toEqual([5, 30_000, 30_000]);
    const circuits = createRoutingSignals(first, defaults).health;
    const accountId = `ca_${randomUUID()}`;
    const returns = [];
    for (let failure = 0; failure < 5; failure++) returns.push(await circuits.record(accountId, 'failure', failure * 7000));
    expect(returns).toEqual(['closed', 'closed', 'closed', 'closed', 'open']);
    expect((await circuits.states([accountId], 28_000 + 29_999)).get(accountId)).toBe('open');
    expect((await circuits.states([accountId], 28_000 + 30_000)).get(accountId)).toBe('half_open');
  });
});
