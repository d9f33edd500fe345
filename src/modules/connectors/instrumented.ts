// Every processor call timed and counted (docs/operations.md, "Metrics"): latency by connector and flow,
// the outcome, and a decline's catalog code. One wrapper per client, built with the client; a call costs a
// timer and its label lookups.
import type { Metrics } from '../../platform/http/metrics.ts';
import { secondsSince } from '../../platform/http/metrics.ts';
import { ConnectorError, type Connector, type PaymentError } from './port.ts';

/** The Connector methods that call the processor: the `flow` label's values. */
const FLOWS = [
  'authorize',
  'capture',
  'void',
  'sync',
  'completeRedirect',
  'findByReference',
  'refund',
  'syncRefund',
  'findRefundByReference',
  'acceptDispute',
  'submitDisputeEvidence',
  'createPayout',
  'cancelPayout',
  'syncPayout',
  'findPayoutByReference',
  'createSession',
] as const satisfies readonly (keyof Connector)[];

/** A decline the processor answered with (a failed payment, refund or payout carries one); null otherwise. */
function declineOf(result: unknown): PaymentError | null {
  if (typeof result !== 'object' || result === null || !('error' in result)) return null;
  const error = (result as { error: PaymentError | null }).error;
  return error?.code === undefined ? null : error;
}

/** `connector` with each processor call measured under its `name`. */
export function instrumentConnector(connector: Connector, metrics: Metrics): Connector {
  const measured: Record<string, unknown> = Object.create(connector) as Record<string, unknown>;
  const name = connector.name;
  for (const flow of FLOWS) {
    const call = connector[flow] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (call === undefined) continue;
    measured[flow] = async (...args: unknown[]) => {
      const started = process.hrtime.bigint();
      try {
        const result = await call.apply(connector, args);
        const decline = declineOf(result);
        metrics.connectorCalls.labels(name, flow, decline ? 'declined' : 'success').inc();
        if (decline) metrics.connectorDeclines.labels(name, decline.code).inc();
        return result;
      } catch (error) {
        const declineCode = error instanceof ConnectorError ? error.declineCode : undefined;
        metrics.connectorCalls.labels(name, flow, declineCode ? 'declined' : error instanceof ConnectorError ? error.kind : 'error').inc();
        if (declineCode) metrics.connectorDeclines.labels(name, declineCode).inc();
        throw error;
      } finally {
        metrics.connectorDuration.labels(name, flow).observe(secondsSince(started));
      }
    };
  }
  return measured as unknown as Connector;
}
