// Bodies over a route's limit: every client reads the 413 (the rest of the body is read and thrown away, up to
// a bound, so a client still sending sees the answer rather than a reset connection); a body past that bound is
// cut off; and a client that hangs up mid-body is an ordinary event in the log, not an error.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DISCARDED_BODY_BYTES } from '../../src/platform/http/node-bridge.ts';
import { startApiProcess, type ApiProcess } from '../support/processes.ts';

// Its own process, as in production: in this one, the client's writes and the server's reads would take turns.
let api: ApiProcess;
beforeAll(async () => {
  api = await startApiProcess();
});
afterAll(async () => {
  await api.process.stop();
});

const FIVE_MB = Buffer.alloc(5 * 1024 * 1024, 'a');

/** The code of a 413's body, in the route's own error shape (GraphQL's or the REST routes'). */
function codeOf(body: { errors?: { extensions: { code: string } }[]; error?: { code: string } }): string | undefined {
  return body.errors?.[0]?.extensions.code ?? body.error?.code;
}

describe('a body over the limit', () => {
  it.each([
    ['/graphql', '/graphql'],
    ['a callback', '/webhooks/mer_AAAAAAAAAAAAAAAAAAAAAAAAAA/mca_AAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('%s: 10 of 10 sends of 5 MB with fetch read a 413 PAYLOAD_TOO_LARGE', async (_label, path) => {
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const streamed = attempt % 2 === 1;
      try {
        const response = await fetch(`${api.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: streamed ? new Blob([FIVE_MB]).stream() : FIVE_MB,
          duplex: 'half',
        } as RequestInit);
        outcomes.push(`${response.status} ${codeOf(await response.json())}`);
      } catch (error) {
        outcomes.push(String((error as { cause?: { code?: string } }).cause?.code ?? error));
      }
    }
    expect(outcomes).toEqual(Array(10).fill('413 PAYLOAD_TOO_LARGE'));
  });
});

/** Opens a raw connection to the API and sends a request's head. */
function rawRequest(path: string, headers: Record<string, string | number>) {
  const { hostname, port } = new URL(api.url);
  const socket = connect(Number(port), hostname);
  const head = Object.entries({ host: hostname, 'content-type': 'application/json', ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`POST ${path} HTTP/1.1\r\n${head.join('')}\r\n`);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {}); // a reset is what the cut-off test expects
  return { socket, closed, received: () => received };
}

describe('a body past the discard bound', () => {
  it('is cut off once MAX_DISCARDED_BODY_BYTES have been read, after the 413 was sent', async () => {
    const { socket, closed, received } = rawRequest('/graphql', { 'content-length': 1024 ** 3 });
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    // Sends until the server closes, or 4 times the bound (what a server reading forever would take).
    while (!isClosed && sent < 4 * MAX_DISCARDED_BODY_BYTES) {
      if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
      sent += chunk.length;
    }
    const cutOff = isClosed;
    socket.destroy();
    expect(cutOff, `still reading after ${sent} bytes`).toBe(true);
    expect(sent).toBeGreaterThanOrEqual(MAX_DISCARDED_BODY_BYTES);
    expect(sent).toBeLessThan(2 * MAX_DISCARDED_BODY_BYTES);
    expect(received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(received()).toContain('PAYLOAD_TOO_LARGE');
  });
});

describe('a client that hangs up mid-body', () => {
  it('is logged at info, without a stack, and is not an error', async () => {
    const requestId = `hangup-${randomUUID()}`;
    const { socket, closed } = rawRequest('/graphql', { 'content-length': 100_000, 'x-request-id': requestId });
    socket.write('{"query": "');
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the server start reading the body
    socket.destroy();
    await closed;
    await api.process.waitFor(new RegExp(requestId));
    const lines = api.process.output.stdout
      .split('\n')
      .filter((line) => line.includes(requestId))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ level: 30, msg: 'the client closed the connection before sending the whole body', path: '/graphql' })]);
    expect(JSON.stringify(lines)).not.toContain('stack');
  });
});
