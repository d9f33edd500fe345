// Rate limits on what can be done without a secret key: failed authentications per client IP, payment-link
// uses per IP and per link, confirms per client secret, declines per payment link and failed dashboard sign-ins per IP
// and per email. Counted in Redis
// (rate-limiter-flexible, fixed windows under REDIS_PREFIX), so every API process shares them; while Redis
// cannot be reached each process counts on its own. A request with a valid secret key (or the admin key)
// is never counted nor slowed: a merchant's backend sends hundreds a second from one address.
import { isIP } from 'node:net';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from './config.ts';
import { AppError } from '../kernel/errors.ts';

const RULES = {
  failedAuthentications: { setting: 'RATE_LIMIT_FAILED_AUTH_PER_IP', refusal: 'Too many failed authentications from this address.' },
  linkUsesPerIp: { setting: 'RATE_LIMIT_LINK_USES_PER_IP', refusal: 'Too many payment link uses from this address.' },
  linkUsesPerLink: { setting: 'RATE_LIMIT_LINK_USES_PER_LINK', refusal: 'This payment link is being used too often.' },
  confirmsPerClientSecret: { setting: 'RATE_LIMIT_CONFIRMS_PER_CLIENT_SECRET', refusal: 'Too many confirmations of this payment.' },
  declinesPerLink: { setting: 'RATE_LIMIT_DECLINES_PER_LINK', refusal: 'Too many payments through this link were declined.' },
  failedLoginsPerIp: { setting: 'RATE_LIMIT_LOGINS_PER_IP', refusal: 'Too many failed sign-ins from this address.' },
  failedLoginsPerEmail: { setting: 'RATE_LIMIT_LOGINS_PER_EMAIL', refusal: 'Too many failed sign-ins for this email address.' },
} as const;

export type RateRule = keyof typeof RULES;

/** A refusal as the API answers it, over REST and GraphQL alike: 429 RATE_LIMITED, with Retry-After in seconds. */
export function rateLimited(rule: RateRule, refusal: RateLimiterRes): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
  return new AppError('RATE_LIMITED', `${RULES[rule].refusal} Retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });
}

/**
 * Who a client IP counts as: an IPv4 address (also when mapped into IPv6), or an IPv6 address's /64, as one
 * host is usually given a whole /64. Always the socket's peer: X-Forwarded-For is the client's to forge.
 */
export function clientKeyOf(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

export class RateLimits {
  readonly #limiters: Record<RateRule, RateLimiterRedis>;

  constructor(redis: Redis, config: Config) {
    const limiter = (rule: RateRule) => {
      const { points, seconds } = config[RULES[rule].setting];
      const options = { points, duration: seconds };
      return new RateLimiterRedis({
        ...options,
        storeClient: redis,
        keyPrefix: `${config.REDIS_PREFIX}:rate:${rule}`,
        insuranceLimiter: new RateLimiterMemory(options),
      });
    };
    this.#limiters = {
      failedAuthentications: limiter('failedAuthentications'),
      linkUsesPerIp: limiter('linkUsesPerIp'),
      linkUsesPerLink: limiter('linkUsesPerLink'),
      confirmsPerClientSecret: limiter('confirmsPerClientSecret'),
      declinesPerLink: limiter('declinesPerLink'),
      failedLoginsPerIp: limiter('failedLoginsPerIp'),
      failedLoginsPerEmail: limiter('failedLoginsPerEmail'),
    };
  }

  /** RATE_LIMITED when `key` has reached the rule's limit (the next one counted would be over it); nothing is counted. */
  async refuseIfReached(rule: RateRule, key: string): Promise<void> {
    const limiter = this.#limiters[rule];
    const state = await limiter.get(key);
    if (state !== null && state.consumedPoints >= limiter.points) throw rateLimited(rule, state);
  }

  /** Counts one against `key`; RATE_LIMITED when that goes over the limit. */
  async consume(rule: RateRule, key: string): Promise<void> {
    try {
      await this.#limiters[rule].consume(key);
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) throw rateLimited(rule, refusal);
      throw refusal;
    }
  }

  /** Takes back one counted by `consume`: the attempt turned out not to be a failure (docs/dashboard.md, "Sessions"). */
  async forgive(rule: RateRule, key: string): Promise<void> {
    await this.#limiters[rule].reward(key, 1);
  }

  /** Counts one against `key` (a decline, a wrong client secret) without refusing anything now. */
  async count(rule: RateRule, key: string): Promise<void> {
    await this.#limiters[rule].penalty(key);
  }
}
