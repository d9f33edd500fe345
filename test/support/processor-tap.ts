// A tap on the wire between the service and a processor (the sandbox): a real HTTP proxy that forwards every
// request, records it with the processor's answer, and can hold an answer back, so a test knows exactly
// what the processor was asked and did, independently of what the service recorded. Holding the answer
// to an authorization is the moment "after the processor acted, before the service committed its answer".
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, vi } from 'vitest';

export interface TappedExchange {
  method: string;
  /** Path and query, as sent (`/v1/payments`, `/fauxpay/v1/payments?reference=…`). */
  path: string;
  /** The processor key it was sent with (the part after `Bearer `). */
  apiKey: string | null;
  idempotencyKey: string | null;
  requestBody: string;
  /** The processor's answer; undefined while it is on its way. */
  status?: number;
  headers?: IncomingHttpHeaders;
  responseBody?: string;
  /** The processor answered from its idempotency record: nothing happened this time. */
  replayed?: boolean;
  /** The answer was held back and never (or not yet) passed on. */
  held: boolean;
}

export interface ProcessorTap {
  /** Point SANDBOX_URL here. */
  url: string;
  exchanges: TappedExchange[];
  /**
   * The authorizations the processor made for `apiKey`: POST …/payments answered 2xx or 402 (a decline is
   * an authorization attempt the processor decided) that were not idempotent replays.
   */
  authorizations: (apiKey: string) => TappedExchange[];
  /** From now on, answers to requests matching `predicate` are held back (the caller waits for ever). */
  holdAnswers: (predicate: (exchange: TappedExchange) => boolean) => void;
  /** Waits until `count` answers are held (the processor acted on each of them), and returns them. */
  waitForHeld: (count: number, timeout?: number) => Promise<TappedExchange[]>;
  /** Passes the held answers on, and stops holding. */
  releaseHeld: () => void;
  close: () => Promise<void>;
}

const AUTHORIZATION_PATH = /^(\/[a-z]+)?\/v1\/payments$/;

/** Whether `exchange` is an authorization (POST …/payments) by `apiKey`. */
export const isAuthorizationBy = (apiKey: string) => (exchange: TappedExchange) =>
  exchange.method === 'POST' && exchange.apiKey === apiKey && AUTHORIZATION_PATH.test(exchange.path);

export async function startProcessorTap(targetUrl: string): Promise<ProcessorTap> {
  const target = new URL(targetUrl);
  // Its own connections to the processor, closed with the tap.
  const agent = new Agent({ keepAlive: true });
  const exchanges: TappedExchange[] = [];
  let holding: ((exchange: TappedExchange) => boolean) | null = null;
  const releases: (() => void)[] = [];
  const server = createServer((incoming, reply) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const authorization = incoming.headers.authorization ?? '';
      const exchange: TappedExchange = {
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        apiKey: /^Bearer (\S+)$/i.exec(authorization)?.[1] ?? null,
        idempotencyKey: (incoming.headers['idempotency-key'] as string | undefined) ?? null,
        requestBody: body.toString('utf8'),
        held: false,
      };
      exchanges.push(exchange);
      const outgoing = httpRequest(
        { host: target.hostname, port: target.port, method: exchange.method, path: exchange.path, headers: { ...incoming.headers, host: target.host }, agent },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const responseBody = Buffer.concat(parts);
            Object.assign(exchange, {
              status: answer.statusCode,
              headers: answer.headers,
              responseBody: responseBody.toString('utf8'),
              replayed: answer.headers['idempotent-replayed'] === 'true',
            });
            const pass = () => {
              exchange.held = false;
              if (!reply.destroyed) reply.writeHead(answer.statusCode ?? 502, answer.headers).end(responseBody);
            };
            if (holding?.(exchange)) {
              exchange.held = true;
              releases.push(pass);
            } else pass();
          });
        },
      );
      outgoing.on('error', () => reply.destroy());
      outgoing.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    authorizations: (apiKey) =>
      exchanges
        .filter(isAuthorizationBy(apiKey))
        .filter(
          (exchange) => (exchange.status === 402 || (exchange.status !== undefined && exchange.status >= 200 && exchange.status < 300)) && !exchange.replayed,
        ),
    holdAnswers: (predicate) => {
      holding = predicate;
    },
    waitForHeld: (count, timeout = 15_000) =>
      vi.waitFor(
        () => {
          const held = exchanges.filter((exchange) => exchange.held);
          expect(held.length).toBeGreaterThanOrEqual(count);
          return held;
        },
        { timeout, interval: 10 },
      ),
    releaseHeld: () => {
      holding = null;
      for (const release of releases.splice(0)) release();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
