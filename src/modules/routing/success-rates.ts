// The recent authorization outcomes of each connector account for each routing key (a payment's method, card
// network and currency), kept in Redis so every API process ranks accounts alike (docs/routing.md#success-rate).
// Each (account, key) is a list of its last outcomes, newest first: "1" authorized, "0" declined.
import type { ChainableCommander, Redis, Result } from 'ioredis';
import type { SuccessRate } from './algorithm.ts';
import { ROUTING_LIMITS } from './algorithm.ts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    routingOutcomeRecord(outcomesKey: string, ...args: (string | number)[]): Result<null, Context>;
    routingSuccessRates(numberOfKeys: number, ...args: (string | number)[]): Result<number[], Context>;
  }
}

// KEYS[1]: the outcome list; ARGV: the outcome, how many to keep, how long an untouched list is kept (cleanup only).
const RECORD = `
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
`;

// KEYS: one outcome list per account; ARGV[1]: the window. Counted here so the reply is two numbers per
// account, not up to a window's outcomes each: successes, total, successes, total, …
const RATES = `
local window, counts = tonumber(ARGV[1]), {}
for _, key in ipairs(KEYS) do
  local outcomes, successes = redis.call('LRANGE', key, 0, window - 1), 0
  for _, outcome in ipairs(outcomes) do
    if outcome == '1' then successes = successes + 1 end
  end
  table.insert(counts, successes)
  table.insert(counts, #outcomes)
end
return counts
`;

/** Outcomes kept per (account, key): the largest window an algorithm may ask for. */
const KEPT_OUTCOMES = ROUTING_LIMITS.windowSize.max;
/** How long an (account, key) nobody records on is kept: stale rates say little, and dead accounts' keys go. */
const RETENTION_MS = 30 * 24 * 3600 * 1000;

/** Each account's counts from RATES' reply: successes, total, successes, total, … */
function ratesOf(accountIds: readonly string[], counts: readonly number[]): Map<string, SuccessRate> {
  return new Map(accountIds.map((accountId, index) => [accountId, { successes: counts[2 * index]!, total: counts[2 * index + 1]! }]));
}

export class SuccessRates {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    redis.defineCommand('routingOutcomeRecord', { numberOfKeys: 1, lua: RECORD });
    redis.defineCommand('routingSuccessRates', { lua: RATES, readOnly: true });
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** Adds one authorization outcome of `accountId` under `key`, keeping the last KEPT_OUTCOMES. */
  async record(accountId: string, key: string, authorized: boolean): Promise<void> {
    await this.#redis.routingOutcomeRecord(...this.#recordArgs(accountId, key, authorized));
  }

  /** `record`, queued on `commands` to go in the same round trip as others. */
  queueRecord(commands: ChainableCommander, accountId: string, key: string, authorized: boolean): void {
    commands.routingOutcomeRecord(...this.#recordArgs(accountId, key, authorized));
  }

  /** Each account's successes out of its last `windowSize` outcomes under `key` (fewer when it has fewer), in one round trip. */
  async rates(accountIds: readonly string[], key: string, windowSize: number): Promise<Map<string, SuccessRate>> {
    if (accountIds.length === 0) return new Map();
    return ratesOf(accountIds, await this.#redis.routingSuccessRates(...this.#ratesArgs(accountIds, key, windowSize)));
  }

  /** `rates`, queued on `commands` (at least one account): the reply, once sent, reads as `rates` returns. */
  queueRates(commands: ChainableCommander, accountIds: readonly string[], key: string, windowSize: number): (reply: unknown) => Map<string, SuccessRate> {
    commands.routingSuccessRates(...this.#ratesArgs(accountIds, key, windowSize));
    return (reply) => ratesOf(accountIds, reply as number[]);
  }

  #recordArgs(accountId: string, key: string, authorized: boolean): [string, string, number, number] {
    return [this.#outcomesKey(accountId, key), authorized ? '1' : '0', KEPT_OUTCOMES, RETENTION_MS];
  }

  #ratesArgs(accountIds: readonly string[], key: string, windowSize: number): [number, ...(string | number)[]] {
    return [accountIds.length, ...accountIds.map((accountId) => this.#outcomesKey(accountId, key)), windowSize];
  }

  #outcomesKey(accountId: string, key: string): string {
    return `${this.#prefix}:routing:sr:${accountId}:${key}`;
  }
}
