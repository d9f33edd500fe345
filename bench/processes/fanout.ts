// The subscription ceiling: the transport alone. One Redis pub/sub channel, and a plain `ws` server that
// writes every message on it to every connected WebSocket: no GraphQL, no subscription gate, no keys.
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';

const port = Number(process.env.PORT);
const channel = process.env.FANOUT_CHANNEL!;
const redis = new Redis(process.env.REDIS_URL!);
const server = createServer();
const sockets = new WebSocketServer({ server });

await redis.subscribe(channel);
redis.on('message', (_channel: string, message: string) => {
  for (const socket of sockets.clients) socket.send(message);
});
server.listen(port, '127.0.0.1', () => process.stdout.write(`fanout listening on ws://127.0.0.1:${port}/\n`));

process.on('SIGTERM', () => {
  for (const socket of sockets.clients) socket.terminate();
  redis.disconnect();
  server.close(() => process.exit(0));
});
