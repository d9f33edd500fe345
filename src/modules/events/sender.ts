// The webhook services' port to the network (src/modules/events/http-sender.ts implements it): one POST to a
// merchant's URL, which is hostile input, with what came back.
import type { PrivateNetworkAccess } from '../../platform/config.ts';
import type { Metrics } from '../../platform/http/metrics.ts';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Which non-public addresses the URL may reach (only test mode may reach any, when configured). */
  privateNetworks: PrivateNetworkAccess;
}

export type WebhookResponse =
  | {
      kind: 'response';
      status: number;
      /** At most MAX_STORED_RESPONSE_BYTES of the body, decoded as UTF-8. */
      body: string;
      truncated: boolean;
      /** The receiver's Retry-After, in ms from now, when it sent a valid one. */
      retryAfterMs: number | null;
      latencyMs: number;
    }
  /** No HTTP answer: a refused address, a DNS or connection error, a timeout. `error` says which, for the log. */
  | { kind: 'no_response'; error: string; latencyMs: number; timedOut?: boolean };

export const MAX_STORED_RESPONSE_BYTES = 20 * 1024;

export interface WebhookSender {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}

/** A response's class for the delivery metrics (docs/operations.md, "Metrics"). */
export function outcomeClassOf(response: WebhookResponse): '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network' {
  if (response.kind === 'no_response') return response.timedOut ? 'timeout' : 'network';
  if (response.status >= 500) return '5xx';
  if (response.status >= 400) return '4xx';
  return response.status >= 300 ? '3xx' : '2xx';
}

/** `sender` with each POST's latency and outcome class counted. */
export function measuredSender(sender: WebhookSender, metrics: Metrics): WebhookSender {
  return {
    send: async (request) => {
      const response = await sender.send(request);
      metrics.webhookDuration.observe(response.latencyMs / 1000);
      metrics.webhookDeliveries.labels(outcomeClassOf(response)).inc();
      return response;
    },
  };
}
