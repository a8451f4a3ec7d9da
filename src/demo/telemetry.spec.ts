import { metrics, trace } from '@opentelemetry/api';
import { demoTelemetryPlan, startDemoTelemetry } from './telemetry';

describe('example app telemetry switches', () => {
  it('loads nothing when neither variable is set', () => {
    expect(demoTelemetryPlan({})).toEqual({ traces: false, metricsPort: null });
    expect(startDemoTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', METRICS_PORT: '' })).toBeNull();
    expect(trace.getTracer('x').startSpan('y').isRecording()).toBe(false);
    expect(metrics.getMeterProvider().constructor.name).toBe('NoopMeterProvider');
  });

  it('reads the OTLP endpoint and the metrics port', () => {
    expect(demoTelemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', METRICS_PORT: '9464' })).toEqual({
      traces: true,
      metricsPort: 9464,
    });
  });

  it.each(['0', '65536', 'abc', '12.5', '-1'])('refuses METRICS_PORT=%s with a clear message', (value) => {
    expect(() => demoTelemetryPlan({ METRICS_PORT: value })).toThrow(
      `METRICS_PORT="${value}" is not a TCP port: use an integer from 1 to 65535`,
    );
  });
});
