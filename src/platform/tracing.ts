// OpenTelemetry traces (docs/operations.md, "Tracing"), exported over OTLP/HTTP only when
// OTEL_EXPORTER_OTLP_ENDPOINT is set. Unset, nothing is loaded or registered: the API's tracer stays the
// no-op one, no library is patched, and the service's own spans are never started, so tracing costs nothing.
import { createRequire } from 'node:module';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

const TRACER_NAME = 'payments';

let enabled = false;

/** Whether this process exports traces (startTracing found OTEL_EXPORTER_OTLP_ENDPOINT); read by what is built after it. */
export const tracingEnabled = (): boolean => enabled;

/**
 * Registers the tracer provider and the instrumentations, when OTEL_EXPORTER_OTLP_ENDPOINT is set; returns
 * what flushes the spans still buffered at shutdown. Must run before the instrumented libraries are loaded.
 * `serviceName` is the default of OTEL_SERVICE_NAME; the exporter reads the other OTEL_* variables itself.
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<() => Promise<void>> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return async () => {};
  // Loaded only here: a process that does not trace never loads the SDK.
  const [
    { OTLPTraceExporter },
    { registerInstrumentations },
    { HttpInstrumentation },
    { IORedisInstrumentation },
    { PgInstrumentation },
    { UndiciInstrumentation },
    { defaultResource, detectResources, envDetector, resourceFromAttributes },
    { BatchSpanProcessor },
    { NodeTracerProvider },
    { ATTR_SERVICE_NAME },
  ] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const provider = new NodeTracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the process's default name.
    resource: defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }))
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The AsyncLocalStorage context manager and the W3C trace context propagator (traceparent).
  provider.register();
  registerInstrumentations({
    instrumentations: [
      new HttpInstrumentation(),
      new UndiciInstrumentation(),
      // Queries outside a trace (the reconciler's, BullMQ's polling) would each be a trace of their own.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  // The instrumentations patch CommonJS packages as they are required; an ESM import of ioredis (as tsx runs
  // the service) does not go through require, so it is required here first, and every later import, ESM or
  // not, gets the patched class. pg's ESM entry requires its CommonJS code, which the hook sees.
  createRequire(import.meta.url)('ioredis');
  enabled = true;
  return () => provider.shutdown();
}

const tracer = () => trace.getTracer(TRACER_NAME);

/** Runs `work` in a new active span, ended when it settles; an exception marks the span as failed. */
export function inSpan<T>(name: string, options: { kind: SpanKind; attributes?: Attributes; parent?: Context }, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: options.kind, attributes: options.attributes }, options.parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The active trace context as a string (W3C traceparent and tracestate, as JSON), for a message to carry. */
export function serializedTraceContext(): string {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return JSON.stringify(carrier);
}

/** The trace context `serializedTraceContext` wrote; the root context when there is none or it is unreadable. */
export function deserializedTraceContext(serialized: string | undefined): Context {
  if (serialized === undefined) return context.active();
  try {
    return propagation.extract(context.active(), JSON.parse(serialized) as Record<string, string>);
  } catch {
    return context.active();
  }
}

/**
 * Runs `work` in the trace whose W3C traceparent `activeTraceParent` stored, so that what it starts (an enqueue
 * made later for a stored event) joins the trace of what caused it; as it is when there is none or no tracing.
 */
export function inTraceOf<T>(traceParent: string | null, work: () => T): T {
  if (!enabled || traceParent === null) return work();
  return context.with(propagation.extract(context.active(), { traceparent: traceParent }), work);
}

/** The active span's W3C traceparent, to be stored with what it caused; null when this process does not trace. */
export function activeTraceParent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The ids of the active span, for log lines; none outside a span. */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext === undefined ? undefined : { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
