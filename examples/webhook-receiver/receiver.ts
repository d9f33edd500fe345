// An example webhook receiver that does what the seed asks of one: verify the signature over the raw body,
// reject a mismatch, refuse a replayed old delivery (its signed webhook-timestamp is too far from now),
// acknowledge a duplicate event_id without applying it again, and apply a payment only if its `updated`
// is newer than the state already stored (deliveries may arrive out of order).
// Verification is the server SDK's webhooks.verify (docs/webhooks.md, "Verifying with the SDK"); in your
// application, import it from '@payments-orchestrator/node'.
// Run: WEBHOOK_KEY=<payment_response_hash_key> [RECEIVER_PORT=4300] npx tsx examples/webhook-receiver/receiver.ts
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookVerificationError, webhooks, type WebhookEvent } from '../../packages/node/src/index.ts';

/** What the receiver knows: the events it processed and each payment's latest state. A real one uses its database. */
export interface ReceiverState {
  processedEvents: Set<string>;
  payments: Map<string, { status: string; updated: string; version: number }>;
}

const MAX_BODY_BYTES = 1024 * 1024;

export function createReceiver(
  key: string,
  state: ReceiverState = { processedEvents: new Set(), payments: new Map() },
): { server: Server; state: ReceiverState } {
  const server = createServer((request, reply) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      // The exact bytes: verify (both signatures, and the signed timestamp against replays) before parsing.
      let webhook: WebhookEvent;
      try {
        webhook = webhooks.verify(Buffer.concat(chunks), request.headers, key);
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        reply.writeHead(401).end(error.message);
        return;
      }
      if (state.processedEvents.has(webhook.event_id)) {
        reply.writeHead(200).end('duplicate, already processed');
        return;
      }
      if (webhook.content.type === 'payment_details') {
        const payment = webhook.content.object;
        const stored = state.payments.get(payment.payment_id);
        // ISO 8601 instants in UTC compare as strings; `version` orders two changes of the same millisecond.
        const newer = stored === undefined || payment.updated > stored.updated || (payment.updated === stored.updated && payment.version > stored.version);
        if (newer) state.payments.set(payment.payment_id, { status: payment.status, updated: payment.updated, version: payment.version });
      }
      state.processedEvents.add(webhook.event_id);
      // 2xx only once the event is accepted: the service retries anything else.
      reply.writeHead(200).end('ok');
    });
  });
  return { server, state };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const key = process.env.WEBHOOK_KEY;
  if (!key) {
    process.stderr.write('Set WEBHOOK_KEY to the business profile’s payment_response_hash_key.\n');
    process.exit(1);
  }
  // Its own variable: PORT, set for the service in the same shell, would put both on one port.
  const port = Number(process.env.RECEIVER_PORT ?? 4300);
  const { server, state } = createReceiver(key);
  server.on('request', (request) =>
    request.on('end', () => process.stdout.write(`${new Date().toISOString()} ${request.method} ${request.url} processed=${state.processedEvents.size}\n`)),
  );
  server.listen(port, '127.0.0.1', () => {
    const { port: listening } = server.address() as AddressInfo;
    process.stdout.write(`webhook receiver on http://127.0.0.1:${listening}/ (set it as the profile's test webhookUrl)\n`);
  });
}
