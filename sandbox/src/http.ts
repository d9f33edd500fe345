// The sandbox's own Node HTTP helpers (it shares no code with the product it stands in for): a bounded
// request body, a JSON answer, listening on a port.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StartupError } from './startup-error.ts';

/** The body passed its limit: answer 413 (its rest is being read and thrown away, see discardRest). */
export class BodyTooLargeError extends Error {}

/**
 * How much of a body over its limit is read in all (and thrown away) so that a client still sending it reads
 * the 413: closing while it sends would reset the connection under it before it reads the answer. Past this
 * the connection is closed.
 */
const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;

/** The whole body, or BodyTooLargeError as soon as it passes `limit` bytes (declared or streamed). */
export function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      request.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      outcome();
    };
    const tooLarge = () =>
      settle(() => {
        discardRest(request, size);
        reject(new BodyTooLargeError());
      });
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge();
      else chunks.push(chunk);
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks, size)));
    const onGone = () => settle(() => reject(new Error('the client closed the connection before sending the whole body')));
    if (Number(request.headers['content-length'] ?? 0) > limit) return tooLarge();
    request.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

/** Reads the rest of a refused body into nothing, up to MAX_DISCARDED_BODY_BYTES in all, then closes the connection. */
function discardRest(request: IncomingMessage, alreadyRead: number): void {
  let read = alreadyRead;
  request.on('error', () => {}); // the client may stop sending once it has the 413
  request.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > MAX_DISCARDED_BODY_BYTES) request.socket.destroy();
  });
  request.resume();
}

export function sendJson(reply: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  reply.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  reply.end(text);
}

/** Listens and resolves with the port; a taken port is a one-line start-up error. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new StartupError(`port ${port} is already in use; stop the other process or choose another port`) : error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The address a client on this machine uses for a server bound to `host`. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host; // an IPv6 literal needs brackets in a URL
}
