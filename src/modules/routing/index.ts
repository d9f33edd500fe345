// The routing module's public entry: the algorithms' vocabulary, and the signals every process shares in Redis.
import type { Redis } from 'ioredis';
import type { Config } from '../../platform/config.ts';
import { ConnectorHealth } from './health.ts';
import { SuccessRates } from './success-rates.ts';
import type { RoutingSignals } from './service.ts';

export * from './algorithm.ts';
export { ConnectorHealth, type CallOutcome, type Circuit, type CircuitSettings } from './health.ts';
export { SuccessRates } from './success-rates.ts';
export { registerCircuitGauge } from './circuit-gauge.ts';
export { RoutingService, type AuthorizationOutcome, type CircuitsAhead, type RoutedPayment, type RoutingSignals } from './service.ts';

/** The circuit breakers and success rates of this deployment (its REDIS_PREFIX), on `redis`. */
export function createRoutingSignals(redis: Redis, config: Config): RoutingSignals {
  return {
    health: new ConnectorHealth(redis, config.REDIS_PREFIX, {
      failures: config.ROUTING_CIRCUIT_FAILURES,
      windowMs: config.ROUTING_CIRCUIT_WINDOW_MS,
      cooldownMs: config.ROUTING_CIRCUIT_COOLDOWN_MS,
    }),
    successRates: new SuccessRates(redis, config.REDIS_PREFIX),
    batch: () => redis.pipeline(),
  };
}
