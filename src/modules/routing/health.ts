// The circuit breaker of each connector account (docs/routing.md#connector-health), kept in Redis so every API
// and worker process skips the same accounts. Closed: calls go through, and ROUTING_CIRCUIT_FAILURES failures
// within ROUTING_CIRCUIT_WINDOW_MS open it. Open: skipped until the cool-down ends. Half-open: one caller
// (claimProbe) sends a payment; its success closes the circuit, its failure opens it for another cool-down.
// Time is the caller's `now`, so the logic never rests on Redis TTLs (those only clean up forgotten keys);
// each change is one Lua script, so processes recording at once neither lose a failure nor open twice.
import type { ChainableCommander, Redis, Result } from 'ioredis';
import type { CircuitState } from './algorithm.ts';

/** A call's outcome as the circuit counts it: a timeout or a processor failure (5xx, connection error) fails; any answer, a decline too, succeeds. */
export type CallOutcome = 'success' | 'failure';

export interface CircuitSettings {
  /** Failures within the window that open the circuit. */
  failures: number;
  windowMs: number;
  /** How long an open circuit skips the account before a probe may go. */
  cooldownMs: number;
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    routingCircuitRecord(circuitKey: string, failuresKey: string, ...args: (string | number)[]): Result<CircuitState, Context>;
    routingCircuitClaimProbe(circuitKey: string, ...args: (string | number)[]): Result<0 | 1, Context>;
    routingCircuitOpenUntil(numberOfKeys: number, ...circuitKeys: string[]): Result<(string | null)[], Context>;
  }
}

// KEYS[1]: the circuit, a hash of openUntil (set while open or half-open), probeAt (when the current probe
// was claimed) and seq (names failures uniquely); KEYS[2]: the failure times in the window, a sorted set.
// A call that answers while the circuit is open began before it opened: it changes nothing.
const RECORD = `
local outcome, now, failures, window, cooldown, retention = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local openUntil = tonumber(redis.call('HGET', KEYS[1], 'openUntil'))
if openUntil and now < openUntil then return 'open' end
if outcome == 'success' then
  if openUntil then redis.call('DEL', KEYS[1], KEYS[2]) end
  return 'closed'
end
local state = 'closed'
if openUntil then
  state = 'open'
else
  redis.call('ZADD', KEYS[2], now, redis.call('HINCRBY', KEYS[1], 'seq', 1))
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  if redis.call('ZCARD', KEYS[2]) >= failures then state = 'open' end
end
if state == 'open' then
  redis.call('DEL', KEYS[2])
  redis.call('HDEL', KEYS[1], 'probeAt')
  redis.call('HSET', KEYS[1], 'openUntil', now + cooldown)
else
  redis.call('PEXPIRE', KEYS[2], retention)
end
redis.call('PEXPIRE', KEYS[1], retention)
return state
`;

// KEYS[1]: the circuit hash. The first caller once the cool-down is over probes; if its probe has not settled
// within another cool-down (the process died), the next caller may probe instead.
const CLAIM_PROBE = `
local now, cooldown = tonumber(ARGV[1]), tonumber(ARGV[2])
local circuit = redis.call('HMGET', KEYS[1], 'openUntil', 'probeAt')
local openUntil, probeAt = tonumber(circuit[1]), tonumber(circuit[2])
if not openUntil or now < openUntil or (probeAt and now < probeAt + cooldown) then return 0 end
redis.call('HSET', KEYS[1], 'probeAt', now)
return 1
`;

// KEYS: circuit hashes; their openUntil, null where there is none (Lua's false survives in a table, nil would end it).
const OPEN_UNTIL = `
local openUntil = {}
for index, key in ipairs(KEYS) do openUntil[index] = redis.call('HGET', key, 'openUntil') end
return openUntil
`;

/** An account's circuit at some moment, and when an open one's cool-down ends (ms). */
export interface Circuit {
  state: CircuitState;
  openUntil: number | null;
}

/** The circuits of `accountIds` at `now`, from their openUntil as OPEN_UNTIL answers it (ConnectorHealth.openUntil). */
export function circuitsAt(accountIds: readonly string[], now: number, openUntil: readonly (string | null)[]): Map<string, Circuit> {
  return new Map(
    accountIds.map((accountId, index) => {
      const until = openUntil[index] ?? null;
      const state: CircuitState = until === null ? 'closed' : now < Number(until) ? 'open' : 'half_open';
      return [accountId, { state, openUntil: state === 'open' ? Number(until) : null }];
    }),
  );
}

/** How long a circuit nobody records on is kept: long past any window and cool-down, for cleanup only. */
const RETENTION_PAST_SETTINGS_MS = 24 * 3600 * 1000;

export class ConnectorHealth {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #settings: CircuitSettings;

  constructor(redis: Redis, prefix: string, settings: CircuitSettings) {
    redis.defineCommand('routingCircuitRecord', { numberOfKeys: 2, lua: RECORD });
    redis.defineCommand('routingCircuitClaimProbe', { numberOfKeys: 1, lua: CLAIM_PROBE });
    redis.defineCommand('routingCircuitOpenUntil', { lua: OPEN_UNTIL, readOnly: true });
    this.#redis = redis;
    this.#prefix = prefix;
    this.#settings = settings;
  }

  /** Counts one call's outcome at `now` (ms); returns the circuit's state after it. */
  async record(accountId: string, outcome: CallOutcome, now: number): Promise<CircuitState> {
    return this.#redis.routingCircuitRecord(...this.#recordArgs(accountId, outcome, now));
  }

  /** `record`, queued on `commands` to go in the same round trip as others. */
  queueRecord(commands: ChainableCommander, accountId: string, outcome: CallOutcome, now: number): void {
    commands.routingCircuitRecord(...this.#recordArgs(accountId, outcome, now));
  }

  /** Each account's state at `now`, in one round trip: open while now < openUntil, then half-open until a probe settles. */
  async states(accountIds: readonly string[], now: number): Promise<Map<string, CircuitState>> {
    const circuits = await this.circuits(accountIds, now);
    return new Map([...circuits].map(([accountId, circuit]) => [accountId, circuit.state]));
  }

  /** Each account's state at `now` and, for an open one, when its cool-down ends (ms): what connectorAccounts { health } shows. */
  async circuits(accountIds: readonly string[], now: number): Promise<Map<string, Circuit>> {
    if (accountIds.length === 0) return new Map();
    return circuitsAt(accountIds, now, await this.openUntil(accountIds));
  }

  /** When each account's cool-down ends, as stored (null where its circuit is closed), in one round trip: states at any moment follow (circuitsAt). */
  openUntil(accountIds: readonly string[]): Promise<(string | null)[]> {
    return this.#redis.routingCircuitOpenUntil(...this.#openUntilArgs(accountIds));
  }

  /** `circuits`, queued on `commands` (at least one account): the reply, once sent, reads as `circuits` returns. */
  queueCircuits(commands: ChainableCommander, accountIds: readonly string[], now: number): (reply: unknown) => Map<string, Circuit> {
    commands.routingCircuitOpenUntil(...this.#openUntilArgs(accountIds));
    return (reply) => circuitsAt(accountIds, now, reply as (string | null)[]);
  }

  /** For a half-open account: true for one caller per cool-down, who sends the probe; false for the others, who treat it as open. */
  async claimProbe(accountId: string, now: number): Promise<boolean> {
    return (await this.#redis.routingCircuitClaimProbe(this.#circuitKey(accountId), now, this.#settings.cooldownMs)) === 1;
  }

  #recordArgs(accountId: string, outcome: CallOutcome, now: number): [string, string, CallOutcome, number, number, number, number, number] {
    const { failures, windowMs, cooldownMs } = this.#settings;
    const retentionMs = RETENTION_PAST_SETTINGS_MS + windowMs + cooldownMs;
    return [this.#circuitKey(accountId), this.#failuresKey(accountId), outcome, now, failures, windowMs, cooldownMs, retentionMs];
  }

  #openUntilArgs(accountIds: readonly string[]): [number, ...string[]] {
    return [accountIds.length, ...accountIds.map((accountId) => this.#circuitKey(accountId))];
  }

  #circuitKey(accountId: string): string {
    return `${this.#prefix}:routing:circuit:${accountId}`;
  }

  #failuresKey(accountId: string): string {
    return `${this.#prefix}:routing:circuit-failures:${accountId}`;
  }
}
