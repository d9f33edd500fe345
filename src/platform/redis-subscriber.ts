// A Redis connection for SUBSCRIBE. ioredis (5.8.2 and later) sends its handshake (CLIENT SETINFO, then the ready
// check's INFO) after the socket connects and waits for each answer; a SUBSCRIBE sent in that window, which
// ioredis allows, puts the connection in subscriber mode, the INFO is refused, and the connection fails with
// "Connection in subscriber mode" and reconnects (upstream ioredis issue 2037). A subscriber connection skips both:
// the ready check only waits for Redis to finish loading its data, and SUBSCRIBE is served while it loads.
import { Redis, type RedisOptions } from 'ioredis';

export function createSubscriberConnection(redisUrl: string, options: RedisOptions = {}): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null, ...options, enableReadyCheck: false, disableClientInfo: true });
}
