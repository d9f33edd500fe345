// The circuit breakers as a gauge (docs/operations.md, "Metrics"): how many connector accounts are in each
// state, by connector, read from Redis when /metrics is scraped. The circuits are shared by every process, so
// only API processes expose it (summing it over processes would count each account once per process).
import type { Database } from '../../platform/db/client.ts';
import { gaugeOnScrape, type Metrics } from '../../platform/http/metrics.ts';
import type { CircuitState } from './algorithm.ts';
import type { RoutingService } from './service.ts';

const STATES: readonly CircuitState[] = ['closed', 'open', 'half_open'];

export function registerCircuitGauge(metrics: Metrics, db: Database, routing: RoutingService): void {
  gaugeOnScrape(
    metrics,
    {
      name: 'connector_circuit_accounts',
      help: 'Connector accounts by connector and circuit state (closed, open, half_open).',
      labelNames: ['connector', 'state'],
    },
    async (gauge) => {
      const accounts = await db.connectorAccount.findMany({ select: { id: true, connectorName: true } });
      const circuits = await routing.circuitsOf(accounts.map((account) => account.id));
      // Redis unreachable: no sample rather than a guess (routing treats every circuit as closed meanwhile).
      if (circuits === null) return;
      for (const { connectorName } of accounts) for (const state of STATES) gauge.labels(connectorName, state).set(0);
      for (const { id, connectorName } of accounts) gauge.labels(connectorName, circuits.get(id)?.state ?? 'closed').inc();
    },
  );
}
