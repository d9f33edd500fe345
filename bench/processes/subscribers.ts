// `count` live subscribers in a process of their own: graphql-ws clients of the service's paymentEvents
// (latency from the event's createdAt, written in the committing transaction, to receipt), or plain
// WebSocket clients of the bare fan-out ceiling (latency from the publisher's sentAt). One connection each.
// IPC: "stats" answers what arrived so far; "reset" forgets it (a warm-up's deliveries); "close" ends every connection.
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { answer } from '../lib/ipc.ts';
import { summarize } from '../lib/stats.ts';

interface Spec {
  url: string;
  protocol: 'graphql-ws' | 'ws';
  count: number;
  apiKey?: string;
  profileId?: string;
}

const spec = JSON.parse(process.argv[2]!) as Spec;
const latencies: number[] = [];
const closers: (() => void)[] = [];
const query = 'subscription($profileId: String!) { paymentEvents(profileId: $profileId) { id eventType createdAt } }';

function graphqlSubscriber(): Promise<void> {
  const client: Client = createClient({ url: spec.url, webSocketImpl: WebSocket, connectionParams: { 'api-key': spec.apiKey }, retryAttempts: 0, lazy: false });
  closers.push(() => void client.dispose());
  return new Promise<void>((resolve, reject) => {
    client.on('connected', () => resolve());
    client.subscribe<{ paymentEvents: { createdAt: string } }>(
      { query, variables: { profileId: spec.profileId } },
      {
        next: (result) => {
          const createdAt = result.data?.paymentEvents.createdAt;
          if (createdAt) latencies.push(Date.now() - Date.parse(createdAt));
        },
        error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
        complete: () => undefined,
      },
    );
  });
}

function plainSubscriber(): Promise<void> {
  const socket = new WebSocket(spec.url);
  closers.push(() => socket.close());
  socket.on('message', (data) => latencies.push(Date.now() - (JSON.parse(data.toString()) as { sentAt: number }).sentAt));
  return new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
}

// Connect in batches, as a crowd of dashboards would arrive, without a thundering herd of 1,000 handshakes.
for (let started = 0; started < spec.count; started += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, spec.count - started) }, () => (spec.protocol === 'graphql-ws' ? graphqlSubscriber() : plainSubscriber())),
  );
}
process.stdout.write(`subscribers connected ${spec.count}\n`);

answer('stats', () => ({ received: latencies.length, latencyMs: summarize(latencies) }));
answer('reset', () => {
  latencies.length = 0;
  return {};
});
answer('close', () => {
  for (const close of closers) close();
  setTimeout(() => process.exit(0), 200);
  return {};
});
