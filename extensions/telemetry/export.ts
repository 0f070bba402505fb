/**
 * The OpenTelemetry SDK side of traces, imported (dynamically, by tracer.ts) only when `telemetry.otlpEndpoint`
 * is set: a tracer provider with a batch processor in front of the OTLP/HTTP exporter of the chosen
 * encoding. Memory is bounded by construction: at most `maxQueueSize` ended spans wait for export (the
 * collector down or slow); the ones beyond are dropped and counted, never queued, and a turn never waits.
 */
import { ROOT_CONTEXT, SpanKind, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import {
  BatchSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';

export interface ExportOptions {
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export request; values are secrets (never logged, never in a span). */
  headers: Record<string, string>;
  serviceName: string;
  serviceVersion: string;
  maxQueueSize: number;
  scheduledDelayMillis: number;
}

/** Spans waiting for export and the ones dropped because the queue was full. */
export interface QueueStats {
  queued: number;
  dropped: number;
  exported: number;
  failed: number;
}

export interface Exporting {
  tracer: Tracer;
  stats: QueueStats;
  /** The context with `span` as parent, for child spans. */
  under(span: Span): Context;
  /** A remote parent from a W3C traceparent (already checked). */
  remote(traceparent: string): Context;
  shutdown(): Promise<void>;
}

export { SpanKind, ROOT_CONTEXT };

export async function startExporting(options: ExportOptions): Promise<Exporting> {
  const Exporter =
    options.protocol === 'http/json'
      ? (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter
      : (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter;
  const stats: QueueStats = { queued: 0, dropped: 0, exported: 0, failed: 0 };
  const exporter = new Exporter({ url: options.endpoint, headers: options.headers, timeoutMillis: 10_000 });
  const counted = countingExporter(exporter, stats);
  const batch = new BatchSpanProcessor({
    exporter: counted,
    // One above our own bound: the batch processor never drops silently, we do (and count it).
    maxQueueSize: options.maxQueueSize + 1,
    maxExportBatchSize: Math.min(512, options.maxQueueSize),
    scheduledDelayMillis: options.scheduledDelayMillis,
    exportTimeoutMillis: 10_000,
  });
  const bounded: SpanProcessor = {
    onStart: () => {},
    onEnd(span: ReadableSpan) {
      if (stats.queued >= options.maxQueueSize) {
        stats.dropped++;
        return;
      }
      stats.queued++;
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      'service.version': options.serviceVersion,
    }),
    spanProcessors: [bounded],
  });
  return {
    tracer: provider.getTracer('agt', options.serviceVersion),
    stats,
    under: (span) => trace.setSpan(ROOT_CONTEXT, span),
    remote(traceparent) {
      const [, traceId, spanId, flags] = traceparent.split('-');
      return trace.setSpanContext(ROOT_CONTEXT, {
        traceId: traceId!,
        spanId: spanId!,
        traceFlags: parseInt(flags!, 16),
        isRemote: true,
      });
    },
    async shutdown() {
      // Bounded: a collector that is down must not hold the daemon's stop.
      await Promise.race([
        provider.shutdown().catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, 3_000).unref()),
      ]);
    },
  };
}

/** Counts what leaves the queue (exported or failed) so `queued` is the number still waiting. */
function countingExporter(exporter: SpanExporter, stats: QueueStats): SpanExporter {
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        stats.queued = Math.max(0, stats.queued - spans.length);
        if (result.code === 0) stats.exported += spans.length;
        else stats.failed += spans.length;
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
