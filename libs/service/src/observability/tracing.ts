// OpenTelemetry traces, off unless an OTLP endpoint is configured with the standard environment
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; OTLP over
// HTTP/JSON; OTEL_SDK_DISABLED=true switches it off). Spans cross processes as W3C `traceparent`:
// on the bus in the CloudEvents envelope (the CloudEvents distributed-tracing extension), over
// gRPC in the call's metadata, and into the sync service's queue with the operation. Every span of
// an event's work carries the event's correlation id (`capstan.correlation_id`). While tracing is
// off, `inSpan` only runs its function (the API's no-op tracer) and nothing is propagated.
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const TRACER = 'capstan';
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export interface Tracing {
  /** Where spans go (OTLP/HTTP). */
  readonly url: string;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** The OTLP traces URL the environment configures, or undefined (tracing off). */
export function otlpTracesUrl(env: Record<string, string | undefined>): string | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Starts exporting this process's spans when the environment names an OTLP endpoint (service name
 * `capstan-<service>`, or OTEL_SERVICE_NAME). Registers the global tracer provider, W3C propagator
 * and AsyncLocalStorage context manager.
 */
export function startTracing(service: string, env: Record<string, string | undefined>): Tracing | undefined {
  const url = otlpTracesUrl(env);
  if (!url) return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME?.trim() || `capstan-${service}`,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 1_000 })],
  });
  provider.register();
  return {
    url,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/**
 * Runs `fn` in a new span (a child of `parent`, else of the active span), ending it with `fn`'s
 * outcome: an error is recorded on the span and thrown on.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
  options: { parent?: Context; kind?: SpanKind } = {},
): Promise<T> {
  const tracer = trace.getTracer(TRACER);
  return tracer.startActiveSpan(
    name,
    { attributes, kind: options.kind ?? SpanKind.INTERNAL },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await fn();
      } catch (err) {
        span.recordException(err as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message ?? String(err) });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** Adds attributes to the active span (none while tracing is off). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span as a W3C traceparent, or undefined (tracing off, or no span). */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const value = carrier.traceparent;
  return value && TRACEPARENT.test(value) ? value : undefined;
}

/** The context a W3C traceparent names (the root context when there is none or it is malformed). */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  if (!traceparent || !TRACEPARENT.test(traceparent)) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

export { SpanKind };
