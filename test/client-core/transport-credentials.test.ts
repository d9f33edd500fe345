// The transport's two kinds of credentials (packages/client-core/src/transport.ts): an API key, or a
// dashboard session's CSRF token (docs/dashboard.md) — each sent where the service reads it, never both.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTransport } from '@payments-orchestrator/client-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';

const seenHeaders: IncomingHttpHeaders[] = [];
const seenInits: unknown[] = [];
const server = createServer((request, reply) => {
  seenHeaders.push(request.headers);
  reply.writeHead(200, { 'content-type': 'application/json' });
  reply.end(JSON.stringify({ data: { ok: true } }));
});
const sockets = new WebSocketServer({ server, handleProtocols: () => 'graphql-transport-ws' });
sockets.on('connection', (socket) =>
  socket.on('message', (message) => {
    const parsed = JSON.parse(String(message)) as { type: string; id?: string; payload?: unknown };
    if (parsed.type === 'connection_init') {
      seenInits.push(parsed.payload);
      socket.send(JSON.stringify({ type: 'connection_ack' }));
    }
    // The subscription ends at once in an error: the handlers' error is the test's signal.
    if (parsed.type === 'subscribe') socket.send(JSON.stringify({ type: 'error', id: parsed.id, payload: [{ message: 'done' }] }));
  }),
);
let baseUrl: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  sockets.close();
  await new Promise((resolve) => server.close(resolve));
});

const query = { toString: () => 'query { ok }' };

async function socketInit(transport: ReturnType<typeof createTransport>): Promise<unknown> {
  const before = seenInits.length;
  await new Promise<void>((resolve) => {
    transport.subscribe(query, {}, { next: () => undefined, error: () => resolve() });
  });
  await transport.close();
  return seenInits[before];
}

describe('the transport credentials', () => {
  it('sends a session CSRF token in X-CSRF-Token and connection_init, and no API key', async () => {
    const transport = createTransport({ csrfToken: 'csrf-123', baseUrl, webSocketImpl: WebSocket });
    await transport.request(query, {});
    const headers = seenHeaders.at(-1)!;
    expect(headers['x-csrf-token']).toBe('csrf-123');
    expect(headers['api-key']).toBeUndefined();
    expect(headers['authorization']).toBeUndefined();
    expect(await socketInit(transport)).toEqual({ csrfToken: 'csrf-123' });
  });

  it('sends an API key in its header and connection_init, and no CSRF token', async () => {
    const transport = createTransport({ apiKey: 'sk_test_abc', baseUrl, webSocketImpl: WebSocket });
    await transport.request(query, {});
    const headers = seenHeaders.at(-1)!;
    expect(headers['api-key']).toBe('sk_test_abc');
    expect(headers['x-csrf-token']).toBeUndefined();
    expect(await socketInit(transport)).toEqual({ 'api-key': 'sk_test_abc' });
  });

  it('refuses both or neither', () => {
    expect(() => createTransport({ apiKey: 'sk_test_abc', csrfToken: 'csrf' } as never)).toThrow('exactly one of apiKey and csrfToken');
    expect(() => createTransport({ baseUrl } as never)).toThrow('exactly one of apiKey and csrfToken');
  });
});
