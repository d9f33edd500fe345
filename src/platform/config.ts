// Configuration from the environment, validated once at start. Every variable is in the table of
// docs/configuration.md; a bad value stops the process with one line naming the variable and the rule.
import { z } from 'zod';
import { StartupError } from './startup-error.ts';

const booleanFromString = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** A rate limit as "<count>/<seconds>" ("20/300": 20 in any 5 minutes). */
const rateRule = z.string().transform((value, context) => {
  const match = /^(\d{1,9})\/(\d{1,9})$/.exec(value.trim());
  const [points, seconds] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (points < 1 || seconds < 1 || seconds > 31 * 24 * 3600) {
    context.addIssue({
      code: 'custom',
      message: 'must be "<count>/<seconds>": a count of at least 1 in a window of 1 to 2678400 seconds (31 days), such as "20/300"',
    });
    return z.NEVER;
  }
  return { points, seconds };
});

/**
 * A worker sweep's interval in ms, or 0 to leave the sweep to other workers (a pool that only delivers webhooks, or
 * tests whose workers share one database but not one processor).
 */
const SWEEP_INTERVAL_RULE = 'must be 0 (off) or from 100 to 3600000 ms';
const sweepInterval = z
  .string()
  .trim()
  .regex(/^\d{1,7}$/, SWEEP_INTERVAL_RULE) // digits only: " " or "1e3" is not quietly a number (or 0: off)
  .transform(Number)
  .refine((ms) => ms === 0 || (ms >= 100 && ms <= 3_600_000), SWEEP_INTERVAL_RULE)
  .default(30_000);

const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgresql://postgres@127.0.0.1:5432/payments'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** How long a transaction waits for a pooled connection before SERVICE_UNAVAILABLE (Prisma's maxWait; its default, 2 s). */
  DATABASE_TRANSACTION_MAX_WAIT_MS: z.coerce.number().int().min(1).max(600_000).default(2_000),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  /** Namespaces every Redis key and channel, so several deployments (or test runs) can share one Redis. */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/)
    .default('pay'),
  HOST: z.string().default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  /** The URL merchants and processors reach this service at (redirects and callback URLs are built from it). */
  PUBLIC_URL: z.url().optional(),
  /** Where error answers' `docs` links point (the folder holding api.md); unset: the path in the repository, `docs/api.md#…`. */
  DOCS_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Where a worker process serves its /metrics (docs/operations.md, "Metrics"); 0: any free port. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** Creates merchant accounts. Unset: the admin operations refuse every caller. */
  ADMIN_API_KEY: z.string().min(24, 'must be at least 24 characters').optional(),
  /** 32 bytes, hex or base64: encrypts secrets at rest (webhook signing keys, connector credentials). Required: no key ships in the source. */
  ENCRYPTION_KEY: z.string('required (32 bytes as 64 hex characters or base64; generate one with: openssl rand -hex 32)'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Largest request body accepted, in bytes. */
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(50 * 1024 * 1024)
    .default(1024 * 1024),
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(2).max(50).default(12),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(100).default(5000),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).default(5000),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).default(30),
  GRAPHIQL: booleanFromString.optional(),
  /** Answers `__schema` and `__type` queries; unset: on unless production (the schema is public in schema.graphql). */
  GRAPHQL_INTROSPECTION: booleanFromString.optional(),
  /** Where the sandbox processor listens (the sandbox connector calls it there). */
  SANDBOX_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:4100'),
  /** Where the Stripe connector calls Stripe's API (a proxy, or a local fake in tests, may stand in). */
  STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).default('https://api.stripe.com'),
  /**
   * Where the Adyen connector reaches Adyen's Checkout API (test accounts; live accounts use the URL their
   * liveUrlPrefix gives): a proxy or a local fake can stand in (docs/connectors/adyen.md).
   */
  ADYEN_CHECKOUT_API_BASE: z.url({ protocol: /^https?$/ }).default('https://checkout-test.adyen.com'),
  /** How long a processor call may take before its outcome is treated as unknown (the payment stays PROCESSING). */
  CONNECTOR_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /**
   * A connector account's circuit breaker (docs/routing.md#connector-health): this many timeouts or processor
   * failures within the window skip the account, in every process, for the cool-down; then one payment probes it.
   */
  ROUTING_CIRCUIT_FAILURES: z.coerce.number().int().min(1).max(10_000).default(5),
  ROUTING_CIRCUIT_WINDOW_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  ROUTING_CIRCUIT_COOLDOWN_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  /** The Redis connector health and success rates live on (docs/routing.md#connector-health); REDIS_URL when unset. */
  ROUTING_REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** How long a routing signal's read or write may take before the payment goes on without it: a Redis that stops answering costs each confirm at most this. */
  ROUTING_REDIS_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(150),
  /** Scales every webhook retry delay (the seed's 24 h schedule): 0.001 runs it in 86 s, for tests and demos. */
  WEBHOOK_RETRY_DELAY_SCALE: z.coerce.number().positive().max(1000).default(1),
  /**
   * Which non-public addresses test-mode webhooks may reach: `loopback` (a receiver on this machine, the
   * local demo), `true` (every private, loopback and link-local range, for tests) or `false` (none).
   * Live-mode webhooks never may.
   */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: z
    .enum(['true', 'false', '1', '0', 'loopback'], 'must be true, false or loopback')
    .transform((value): PrivateNetworkAccess => (value === 'loopback' ? 'loopback' : value === 'true' || value === '1' ? 'all' : 'none'))
    .default('none'),
  /** How long one webhook delivery may take (connect, send, answer) before it counts as failed and is retried. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
  /** How often the worker looks for due webhook deliveries that have no queued job (after a Redis flush). */
  WEBHOOK_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** How often a worker expires unconfirmed payments past their profile's session expiry; 0: never (other workers do). */
  PAYMENT_EXPIRY_SWEEP_MS: sweepInterval,
  /** How often a worker charges subscriptions whose next period is due; 0: never (other workers do). */
  SUBSCRIPTION_SWEEP_MS: sweepInterval,
  /** Scales the payment sync schedule (modules/processor-sync/schedule.ts) down, for tests and demos. */
  PAYMENT_SYNC_DELAY_SCALE: z.coerce.number().positive().max(1).default(1),
  /** Subscriptions (graphql-ws) one API process serves at once, and one API key may hold on one process. */
  SUBSCRIPTIONS_PER_PROCESS: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  SUBSCRIPTIONS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(100),
  /**
   * Subscriptions a publishable key's subscriber may hold on one process: per client secret (one checkout,
   * a few tabs) and per client IP (a shop's customers behind one address), so one payer cannot use up the
   * merchant's slots.
   */
  SUBSCRIPTIONS_PER_CLIENT_SECRET: z.coerce.number().int().min(1).max(100_000).default(5),
  SUBSCRIPTIONS_PER_CLIENT_IP: z.coerce.number().int().min(1).max(100_000).default(50),
  /**
   * How long an API key, business profile or connector account stays in a process's read cache without being
   * invalidated (docs/architecture.md, "Read cache"): a backstop for rows changed outside the service, which Redis
   * invalidations do not cover. 0 turns the cache off.
   */
  READ_CACHE_TTL_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** At most this many entries in a process's read cache; the least recently used go first. */
  READ_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** How often the keys of running subscriptions are checked again: a revoked key's subscriptions end within this. */
  SUBSCRIPTION_KEY_RECHECK_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
  /**
   * Rate limits on what a caller without a secret key can do, shared by every API process through Redis,
   * each "<count>/<seconds>": at most count in any window of that many seconds.
   */
  RATE_LIMIT_FAILED_AUTH_PER_IP: rateRule.default({ points: 20, seconds: 300 }),
  RATE_LIMIT_LINK_USES_PER_IP: rateRule.default({ points: 10, seconds: 60 }),
  RATE_LIMIT_LINK_USES_PER_LINK: rateRule.default({ points: 100, seconds: 60 }),
  RATE_LIMIT_CONFIRMS_PER_CLIENT_SECRET: rateRule.default({ points: 10, seconds: 600 }),
  RATE_LIMIT_DECLINES_PER_LINK: rateRule.default({ points: 10, seconds: 3600 }),
  /** Dashboard sign-in attempts that failed (docs/dashboard.md), per client IP and per email address. */
  RATE_LIMIT_LOGINS_PER_IP: rateRule.default({ points: 20, seconds: 900 }),
  RATE_LIMIT_LOGINS_PER_EMAIL: rateRule.default({ points: 10, seconds: 900 }),
  /** bcrypt's cost for dashboard passwords (2^cost rounds); tests lower it to save time. */
  DASHBOARD_BCRYPT_COST: z.coerce.number().int().min(4).max(15).default(12),
  /** How long a dashboard session lasts from sign-in, in hours, however busy it is. */
  DASHBOARD_SESSION_HOURS: z.coerce.number().int().min(1).max(168).default(12),
  /** How long a team invitation's link can be used, in hours. */
  DASHBOARD_INVITATION_HOURS: z.coerce.number().int().min(1).max(720).default(72),
  /** How many jobs of each queue one worker process runs at once (webhook deliveries: WEBHOOK_CONCURRENCY). */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * How many webhook deliveries one worker process runs at once. Those running at once claim and record together
   * (src/platform/batcher.ts), so more at once costs fewer statements per delivery: 32 delivered about 1.7 times
   * as many a second as 10 on the bench (docs/benchmarks.md). A worker killed mid-delivery sends at most this many again.
   */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
});

/**
 * Which private addresses outgoing webhooks may reach (WEBHOOK_ALLOW_PRIVATE_NETWORKS): none; loopback only (a
 * receiver on this machine: the local demo); or every private and link-local range (tests).
 */
export type PrivateNetworkAccess = 'none' | 'loopback' | 'all';

export type Config = z.infer<typeof configSchema> & { encryptionKey: Buffer; graphiql: boolean; introspection: boolean };

export class ConfigError extends StartupError {}

function decodeKey(raw: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('ENCRYPTION_KEY: must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/** Parses the environment with `schema`; the first problem becomes a ConfigError naming the variable. */
function parseEnvironment<Schema extends z.ZodType>(schema: Schema, env: NodeJS.ProcessEnv): z.infer<Schema> {
  // Empty strings mean "unset", as shells and .env files produce them.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const values = parseEnvironment(configSchema, env);
  return {
    ...values,
    encryptionKey: decodeKey(values.ENCRYPTION_KEY),
    graphiql: values.GRAPHIQL ?? values.NODE_ENV !== 'production',
    introspection: values.GRAPHQL_INTROSPECTION ?? values.NODE_ENV !== 'production',
  };
}
