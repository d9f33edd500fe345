// The merchant's webhook endpoint for the bench: answers every POST with 204 once its body is read, or, in
// an outage ("mode" over IPC: { status: 503 }), with that status. Counts what it answered, by status.
import { createServer } from 'node:http';
import { answer } from '../lib/ipc.ts';

const port = Number(process.env.PORT);
let status = 204;
const answered = new Map<number, number>();

const server = createServer((request, reply) => {
  request.resume();
  request.on('end', () => {
    answered.set(status, (answered.get(status) ?? 0) + 1);
    reply.writeHead(status).end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`receiver listening on http://127.0.0.1:${port}/\n`));

answer<{ status: number }>('mode', (message) => {
  status = message.status;
  return {};
});
answer('counts', () => ({ counts: Object.fromEntries(answered) }));

process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
