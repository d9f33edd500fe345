// The webhook backlog as gauges (docs/operations.md, "Metrics"), read from PostgreSQL (the truth of the
// schedule, docs/webhooks.md) when /metrics is scraped. Shared by every process, so only API processes expose them.
import type { Database } from '../../platform/db/client.ts';
import { gaugeOnScrape, type Metrics } from '../../platform/http/metrics.ts';

export function registerWebhookQueueGauges(metrics: Metrics, db: Database): void {
  // A scrape collects every gauge at once: both share the one query in flight.
  let inFlight: Promise<{ count: number; oldestAt: Date | null }> | null = null;
  const backlog = () =>
    (inFlight ??= db.event
      .aggregate({ where: { deliveryStatus: 'PENDING' }, _count: { _all: true }, _min: { createdAt: true } })
      .then((pending) => ({ count: pending._count._all, oldestAt: pending._min.createdAt }))
      .finally(() => {
        inFlight = null;
      }));
  gaugeOnScrape(metrics, { name: 'webhook_pending_deliveries', help: 'Events whose webhook is not yet delivered nor given up (PENDING).' }, async (gauge) =>
    gauge.set((await backlog()).count),
  );
  gaugeOnScrape(
    metrics,
    { name: 'webhook_oldest_pending_age_seconds', help: 'Age of the oldest event whose webhook is still PENDING; 0 when none is.' },
    async (gauge) => {
      const { oldestAt } = await backlog();
      gauge.set(oldestAt === null ? 0 : (Date.now() - oldestAt.getTime()) / 1000);
    },
  );
}
