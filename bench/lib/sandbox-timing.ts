// Preloaded into the sandbox processor's process by the bench (`--import`), leaving the sandbox (sandbox/) untouched:
// the sandbox's own time for each payment authorization (POST /v1/payments), from the moment its HTTP
// server has the request's headers to the moment the last byte of the answer is handed to the socket
// (Node's http.server diagnostics channels), keyed by the Idempotency-Key the service sends (the attempt
// id). It includes SANDBOX_LATENCY_MS. The bench asks for them over IPC ("timings") to subtract processor
// time from end-to-end time, payment by payment.
import diagnosticsChannel from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { answer } from './ipc.ts';

const started = new WeakMap<IncomingMessage, number>();
let timings: [string, number][] = [];

diagnosticsChannel.subscribe('http.server.request.start', (message) => {
  const { request } = message as { request: IncomingMessage };
  if (request.method === 'POST' && request.url === '/v1/payments') started.set(request, performance.now());
});

diagnosticsChannel.subscribe('http.server.response.finish', (message) => {
  const { request } = message as { request: IncomingMessage };
  const start = started.get(request);
  if (start === undefined) return;
  const key = request.headers['idempotency-key'];
  timings.push([typeof key === 'string' ? key : '', performance.now() - start]);
});

/** Hands over (and forgets) the timings recorded since the last ask. */
answer('timings', () => {
  const taken = timings;
  timings = [];
  return { timings: taken };
});
