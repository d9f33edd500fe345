// Reading a bounded request body from node:http and writing a Fetch API Response back to it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { currentScope, errorReferences } from '../request-scope.ts';

/** The body passed its limit: answer 413 (its rest is being read and thrown away, see discardRest). */
export class BodyTooLargeError extends Error {}

/** The client hung up before sending the whole body: nobody is left to answer, and nothing failed here. */
export class ClientClosedError extends Error {}

/**
 * How much of a body over its limit is read in all (and thrown away) so that a client still sending it reads
 * the 413: closing while it sends would reset the connection under it before it reads the answer. Past this
 * the connection is closed.
 */
export const MAX_DISCARDED_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The whole body, or BodyTooLargeError as soon as it passes `limit` bytes (declared or streamed), or
 * ClientClosedError when the client hangs up first.
 */
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
    const onGone = () => settle(() => reject(new ClientClosedError('the client closed the connection before sending the whole body')));
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

export function toFetchHeaders(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** Streams `response` to the client (SSE included) and stops when the client goes away. */
export async function sendResponse(response: Response, reply: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = name === 'set-cookie' ? response.headers.getSetCookie() : value;
  });
  reply.writeHead(response.status, headers);
  if (response.body === null) {
    reply.end();
    return;
  }
  const reader = response.body.getReader();
  reply.on('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!reply.write(value)) await new Promise((resolve) => reply.once('drain', resolve));
  }
  reply.end();
}

/** A REST error body (`{ error: { code } }`) with the request's id and its code's docs link added (docs/api.md, "Errors"). */
function withErrorReferences(body: unknown): unknown {
  const error = (body as { error?: { code?: unknown } } | null)?.error;
  if (typeof error?.code !== 'string') return body;
  return { ...body!, error: { ...error, ...errorReferences(error.code, currentScope()) } };
}

export function sendJson(reply: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  const text = JSON.stringify(withErrorReferences(body));
  reply.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  reply.end(text);
}
