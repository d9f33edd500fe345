// A merchant's webhook endpoint for tests: a real HTTP server on 127.0.0.1 that records every request
// (raw bytes, headers, arrival time) and answers as the test says.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, vi } from 'vitest';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** performance.now() when the whole body had arrived. */
  at: number;
  /** The sender's port (which of the sender's connections it came on). */
  remotePort: number | undefined;
}

export type ReceiverHandler = (request: ReceivedRequest, reply: ServerResponse, index: number) => void;

export const answer =
  (status: number, body = ''): ReceiverHandler =>
  (_request, reply) =>
    reply.writeHead(status).end(body);

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** What the next requests get (204 by default). */
  handler: ReceiverHandler;
  /** The parsed bodies received so far. */
  bodies: () => { event_id: string; event_type: string; content: { type: string; object: Record<string, unknown> } }[];
  /** Waits until at least `count` requests have arrived. */
  waitForRequests: (count: number, timeout?: number) => Promise<ReceivedRequest[]>;
  close: () => Promise<void>;
}

export async function startReceiver(handler: ReceiverHandler = answer(204)): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const receiver = { handler } as Receiver;
  const server = createServer((request, reply) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        method: request.method!,
        url: request.url!,
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: performance.now(),
        remotePort: request.socket.remotePort,
      };
      received.push(entry);
      receiver.handler(entry, reply, received.length - 1);
    });
  });
  // Idle connections stay open as long as the senders' keep-alive agents keep them (60 s), not Node's 5 s.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    received,
    bodies: () => received.map((request) => JSON.parse(request.body.toString('utf8'))),
    waitForRequests: (count: number, timeout = 15_000) =>
      vi.waitFor(
        () => {
          expect(received.length).toBeGreaterThanOrEqual(count);
          return received;
        },
        { timeout, interval: 20 },
      ),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}
