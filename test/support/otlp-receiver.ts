// An OpenTelemetry collector's trace endpoint for tests: a real HTTP server taking the OTLP/HTTP exporter's
// POST /v1/traces (JSON, which @opentelemetry/exporter-trace-otlp-http sends) and keeping every span it got.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP JSON attribute value (ExportTraceServiceRequest, JSON encoding). */
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number; arrayValue?: { values: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

interface ExportTraceServiceRequest {
  resourceSpans: {
    resource: { attributes: KeyValue[] };
    scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }[] }[];
  }[];
}

/** One received span, flattened: its service (resource service.name) and attributes as plain values. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a trace's root. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

const plain = (value: AnyValue): unknown =>
  value.arrayValue ? value.arrayValue.values.map(plain) : (value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue);

const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const requests: { path: string; contentType: string | undefined }[] = [];
  const server = createServer((request, reply) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ path: request.url!, contentType: request.headers['content-type'] });
      if (request.method !== 'POST' || request.url !== '/v1/traces' || request.headers['content-type'] !== 'application/json') {
        reply.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportTraceServiceRequest;
      for (const { resource, scopeSpans } of body.resourceSpans) {
        const service = String(attributesOf(resource.attributes)['service.name']);
        for (const { spans: scoped } of scopeSpans)
          for (const span of scoped) spans.push({ service, ...span, parentSpanId: span.parentSpanId ?? '', attributes: attributesOf(span.attributes) });
      }
      reply.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporter adds /v1/traces). */
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
