/**
 * OpenTelemetry for the example app, loaded by `main.ts` before anything else. The library only
 * talks to `@opentelemetry/api`; this file registers an SDK behind it when asked:
 *
 * - `OTEL_EXPORTER_OTLP_ENDPOINT` set: the Node SDK with the OTLP HTTP trace exporter (the
 *   exporter reads the endpoint and the other `OTEL_EXPORTER_OTLP_*` variables itself), the W3C
 *   Trace Context and Baggage propagators and the AsyncLocalStorage context manager;
 * - `METRICS_PORT` set: the metrics are served for Prometheus on that port (`/metrics`).
 *
 * Neither set: nothing is loaded, and every span and metric of the library is a no-op.
 */

/** The variables this file reads. */
export interface DemoTelemetryEnv {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  METRICS_PORT?: string;
}

/** What `startDemoTelemetry` decided from the environment. */
export interface DemoTelemetryPlan {
  /** Export traces over OTLP/HTTP. */
  traces: boolean;
  /** Serve Prometheus metrics on this port, or null. */
  metricsPort: number | null;
}

/** Reads the environment; a METRICS_PORT that is not a port stops the boot with a clear message. */
export function demoTelemetryPlan(env: DemoTelemetryEnv): DemoTelemetryPlan {
  const traces = !!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const raw = env.METRICS_PORT?.trim();
  if (!raw) return { traces, metricsPort: null };
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`METRICS_PORT="${env.METRICS_PORT}" is not a TCP port: use an integer from 1 to 65535`);
  }
  return { traces, metricsPort: port };
}

/** Stops what `startDemoTelemetry` started (flushes pending spans). */
export type DemoTelemetryShutdown = () => Promise<void>;

/* eslint-disable @typescript-eslint/no-require-imports -- the SDK is loaded only when asked for */
/** Registers the SDK the environment asks for; returns how to stop it, or null when nothing was asked. */
export function startDemoTelemetry(env: DemoTelemetryEnv = process.env): DemoTelemetryShutdown | null {
  const plan = demoTelemetryPlan(env);
  if (!plan.traces && plan.metricsPort === null) return null;
  const metricReaders =
    plan.metricsPort === null
      ? []
      : [
          new (
            require('@opentelemetry/exporter-prometheus') as typeof import('@opentelemetry/exporter-prometheus')
          ).PrometheusExporter({ port: plan.metricsPort }),
        ];
  if (!plan.traces) {
    const { metrics } = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
    const { MeterProvider } = require('@opentelemetry/sdk-metrics') as typeof import('@opentelemetry/sdk-metrics');
    const provider = new MeterProvider({ readers: metricReaders });
    metrics.setGlobalMeterProvider(provider);
    return () => provider.shutdown();
  }
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const sdk = new NodeSDK({
    serviceName: 'durable-mcp-example',
    traceExporter: new OTLPTraceExporter(),
    metricReaders,
    instrumentations: [],
  });
  sdk.start();
  return () => sdk.shutdown();
}
/* eslint-enable @typescript-eslint/no-require-imports */
