// A process without the API's HTTP server (a worker) serves its own metrics here: GET /metrics only
// (docs/operations.md, "Metrics"; WORKER_METRICS_PORT in docs/configuration.md).
import { createServer, type Server } from 'node:http';
import { listen, reachableHost } from './listen.ts';
import type { Metrics } from './metrics.ts';

export interface MetricsServer {
  url: string;
  close: () => Promise<void>;
}

export async function serveMetrics(metrics: Metrics, port: number, host: string): Promise<MetricsServer> {
  const server: Server = createServer((request, reply) => {
    if (request.url !== '/metrics' || request.method !== 'GET') {
      reply.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => reply.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => reply.writeHead(500, { 'content-type': 'text/plain' }).end('Collecting the metrics failed.\n'),
    );
  });
  const bound = await listen(server, port, host);
  return {
    url: `http://${reachableHost(host)}:${bound}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
