// The per-request GraphQL context: who is calling and the services to act through.
import type { Database } from '../db/client.ts';
import type { Logger } from '../logger.ts';
import type { LiveFeed } from '../../api/live-feed.ts';
import type { SubscriptionGate } from '../../api/subscription-gate.ts';
import type { Services } from '../../modules/services.ts';
import type { Principal } from '../../kernel/principal.ts';
import type { RateLimits } from '../rate-limits.ts';
import type { IdempotencyClaim } from '../http/idempotency.ts';

export interface GraphQLContext {
  principal: Principal;
  services: Services;
  logger: Logger;
  /** For @pothos/plugin-prisma's relation loading only: resolvers go through services. */
  db: Database;
  requestId: string;
  /** What subscriptions listen to (Redis pub/sub, shared by every process). */
  live: LiveFeed;
  /** Bounds, backlog limit and revocation for every subscription stream (both transports). */
  gate: SubscriptionGate;
  /** Who the caller counts as for rate limits: its IP (an IPv6 address's /64). */
  clientIp: string;
  limits: RateLimits;
  /** A keyed request's claim on its key, for a mutation that takes it with its first write (CLAIM_ON_FIRST_WRITE). */
  idempotencyClaim?: IdempotencyClaim | undefined;
}

/** The context of a field whose auth scope admits only this kind of caller (scope-auth's AuthContexts). */
export type ContextFor<Kind extends Principal['kind']> = GraphQLContext & { principal: Extract<Principal, { kind: Kind }> };
