// The webhook HTTP client: one POST to a merchant URL, which is hostile input. It refuses to reach the
// service's own network (checked at connect time, on the addresses DNS actually returned, so a name that
// is re-pointed after configuration cannot slip through), never follows redirects, bounds the whole
// exchange by a timeout, and reads at most MAX_STORED_RESPONSE_BYTES of what comes back.
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { MAX_STORED_RESPONSE_BYTES, type WebhookRequest, type WebhookResponse, type WebhookSender } from './sender.ts';
import type { PrivateNetworkAccess } from '../../platform/config.ts';

/** Loopback, private, carrier-grade NAT, link-local (cloud metadata), multicast and reserved ranges. */
const PRIVATE_NETWORKS = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE_NETWORKS.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, and the deprecated IPv4-compatible addresses (::a.b.c.d)
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: embeds an IPv4 address that may be private
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE_NETWORKS.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IP literal) is one a merchant URL must not reach. IPv4-mapped IPv6 counts as IPv4. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  return PRIVATE_NETWORKS.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether a URL with `access` may reach `address` (an IP literal): public ones always, loopback ones with `loopback`, all with `all`. */
export function mayReach(address: string, access: PrivateNetworkAccess): boolean {
  if (access === 'all' || !isPrivateAddress(address)) return true;
  const family = net.isIP(address);
  return access === 'loopback' && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

class RefusedAddressError extends Error {
  constructor(address: string) {
    super(`refused to connect to ${address}: private, loopback, link-local or reserved address`);
    this.name = 'RefusedAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing the whole name if any address it resolves to is one `access` may not reach. */
const guardedLookup =
  (access: PrivateNetworkAccess) =>
  (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.find((entry) => !mayReach(entry.address, access));
      if (refused !== undefined) return callback(new RefusedAddressError(refused.address), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };

/** Retry-After as delta-seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * 1000;
  // The IMF-fixdate form ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse alone would take "-5" for a year.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(trimmed)) return null;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/**
 * Keep-alive agents, one pair per network policy, so a socket opened to a private address is never reused by a
 * guarded request; each keeps as many idle sockets per host as deliveries may run at once (`sockets`), so a
 * busy endpoint's connections are reused rather than closed and opened again.
 */
function agents(access: PrivateNetworkAccess, sockets: number) {
  const options = { keepAlive: true, maxSockets: Math.max(64, sockets), maxFreeSockets: Math.max(16, sockets), timeout: 60_000 };
  return { http: new http.Agent(options), https: new https.Agent(options), lookup: access === 'all' ? undefined : guardedLookup(access) };
}

/** `concurrency`: how many deliveries may run at once (WEBHOOK_CONCURRENCY), which sizes the idle-socket pools. */
export function createWebhookSender(options: { timeoutMs: number; concurrency?: number }): WebhookSender & { close(): void } {
  const sockets = options.concurrency ?? 0;
  const byAccess = { none: agents('none', sockets), loopback: agents('loopback', sockets), all: agents('all', sockets) };

  async function send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const latencyMs = () => performance.now() - started;
    const url = new URL(request.url);
    // A literal IP never goes through `lookup`, so it is checked here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(literal) !== 0 && !mayReach(literal, request.privateNetworks)) {
      return { kind: 'no_response', error: new RefusedAddressError(literal).message, latencyMs: latencyMs() };
    }
    const secure = url.protocol === 'https:';
    const agentSet = byAccess[request.privateNetworks];
    // A plain timer, not AbortSignal.timeout: a signal per delivery (its timer, its listeners on the request) cost
    // about 3 % of the worker's CPU in a drain, and destroying the request is what an abort does.
    let timedOut = false;
    let outgoing: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      outgoing?.destroy(new Error(`no response within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    try {
      const { status, body, truncated, retryAfter } = await new Promise<{ status: number; body: Buffer; truncated: boolean; retryAfter: string | undefined }>(
        (resolve, reject) => {
          outgoing = (secure ? https : http).request(url, {
            method: 'POST',
            headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
            agent: secure ? agentSet.https : agentSet.http,
            lookup: agentSet.lookup,
          });
          let responded = false;
          // After the status line, the timeout or a reset only ends the body: see `finish`.
          outgoing.on('error', (error) => {
            if (!responded) reject(error);
          });
          outgoing.on('response', (incoming) => {
            responded = true;
            // The status line decides the outcome; the body is only for the log. Once the status is in,
            // a body that stalls, is cut off or never ends still leaves a response (marked truncated).
            const chunks: Buffer[] = [];
            let size = 0;
            let truncated = false;
            let finished = false;
            const finish = () => {
              if (finished) return;
              finished = true;
              if (!incoming.complete) truncated = true;
              resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks), truncated, retryAfter: incoming.headers['retry-after'] });
              incoming.destroy();
            };
            incoming.on('data', (chunk: Buffer) => {
              const room = MAX_STORED_RESPONSE_BYTES - size;
              chunks.push(chunk.subarray(0, room));
              size += Math.min(chunk.length, room);
              if (chunk.length > room) finish(); // enough for the log: stop reading a body that may never end
            });
            incoming.on('end', finish);
            incoming.on('close', finish);
            incoming.on('error', finish);
          });
          outgoing.end(request.body);
        },
      );
      return { kind: 'response', status, body: body.toString('utf8'), truncated, retryAfterMs: parseRetryAfter(retryAfter), latencyMs: latencyMs() };
    } catch (error) {
      return { kind: 'no_response', error: describe(error, timedOut, options.timeoutMs), latencyMs: latencyMs(), timedOut };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    send,
    close: () => {
      for (const agentSet of Object.values(byAccess)) {
        agentSet.http.destroy();
        agentSet.https.destroy();
      }
    },
  };
}

/** A short reason for the delivery log: never the request, which carries the signature. */
function describe(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no response within ${timeoutMs} ms`;
  if (error instanceof RefusedAddressError) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code ? `connection failed: ${code} (${message})` : `connection failed: ${message}`;
}
