// What a dashboard charts: a merchant's payments by status and its webhook delivery attempts over a recent
// window. Counted in PostgreSQL (two grouped queries), never by loading rows.
import { z } from 'zod';
import { invalidInput } from '../../kernel/errors.ts';
import { INTENT_STATUSES, type IntentStatus } from '../payments/machine/statuses.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';

const HOUR_MS = 60 * 60 * 1000;
const MAX_WINDOW_MS = 30 * 24 * HOUR_MS;

const activityInput = z.object({
  since: z.date().nullish(),
  profileId: z.string().nullish(),
});

export interface Activity {
  since: Date;
  /** Every status, zero counts included, so a chart has a stable set of bars. */
  paymentsByStatus: { status: IntentStatus; count: number }[];
  deliveryAttempts: { total: number; succeeded: number };
}

export class ActivityService {
  constructor(private readonly context: ServiceContext) {}

  async summary(principal: SecretKeyPrincipal, rawInput: unknown, now = new Date()): Promise<Activity> {
    const input = parseInput(activityInput, rawInput);
    const since = input.since ?? new Date(now.getTime() - HOUR_MS);
    if (now.getTime() - since.getTime() > MAX_WINDOW_MS) {
      throw invalidInput('since', 'must be at most 30 days ago');
    }
    const scope = { merchantId: principal.merchantId, mode: principal.mode, ...(input.profileId ? { profileId: input.profileId } : {}) };
    const [byStatus, total, succeeded] = await Promise.all([
      this.context.db.paymentIntent.groupBy({ by: ['status'], where: { ...scope, createdAt: { gte: since } }, _count: { _all: true } }),
      this.context.db.webhookDeliveryAttempt.count({ where: { createdAt: { gte: since }, event: scope } }),
      this.context.db.webhookDeliveryAttempt.count({ where: { createdAt: { gte: since }, event: scope, responseStatus: { gte: 200, lt: 300 } } }),
    ]);
    const counts = new Map(byStatus.map((row) => [row.status, row._count._all]));
    return {
      since,
      paymentsByStatus: INTENT_STATUSES.map((status) => ({ status, count: counts.get(status) ?? 0 })),
      deliveryAttempts: { total, succeeded },
    };
  }
}
