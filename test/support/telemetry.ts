import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A metric reader a test collects on demand. */
class OnDemandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The real OpenTelemetry SDK, registered globally for one suite, with in-memory exporters. */
export interface TestTelemetry {
  /** The spans ended so far. */
  spans(): ReadableSpan[];
  /** Forgets the spans ended so far. */
  resetSpans(): void;
  /** Collects every metric now. */
  metrics(): Promise<MetricData[]>;
  /** Unregisters everything (call in afterAll): other suites see no SDK. */
  shutdown(): Promise<void>;
}

/**
 * Registers a tracer provider (simple processor, in-memory exporter), the AsyncLocalStorage
 * context manager, the W3C Trace Context + Baggage propagators and a meter provider with a reader
 * collected on demand, all as the global OpenTelemetry API sees them.
 */
export function installTestTelemetry(): TestTelemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(tracerProvider);
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    spans: () => exporter.getFinishedSpans(),
    resetSpans: () => exporter.reset(),
    metrics: async () => {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
    },
    shutdown: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The data points of one metric by name (empty when it was never recorded). */
export function pointsOf(all: MetricData[], name: string): DataPoint<number | Histogram>[] {
  return all
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
}

/** A W3C traceparent with fresh random ids, sampled. */
export function randomTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}
