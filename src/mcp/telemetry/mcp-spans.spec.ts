import {
  context,
  diag,
  DiagConsoleLogger,
  DiagLogLevel,
  metrics,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { Toolset } from '../server/dispatch/toolset';
import { extractInboundContext } from './trace-carriers';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  activeTraceId,
  mcpTelemetryActive,
  startExchangeSpan,
  withAuditCommitSpan,
  withInternalSpan,
} from './mcp-spans';
import { installTestTelemetry, pointsOf } from '../../../test/support/telemetry';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const principal = { key: 'alice', label: 'alice', raw: null };

function toolset(seen: { active?: unknown }): Toolset {
  const tools = new Toolset('default', { name: 't', version: '1' }, 50);
  tools.register({
    name: 'add',
    owner: 'Spec.add',
    definition: { name: 'add', inputSchema: { type: 'object' } },
    validateInput: async (value: unknown) => ({ ok: true, value }),
    invoke: async (input: { a: number; b: number }) => {
      seen.active = trace.getActiveSpan();
      return String(input.a + input.b);
    },
  } as never);
  return tools;
}

const call = {
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'tools/call',
  params: { name: 'add', arguments: { a: 2, b: 3 } },
};

describe('telemetry without an OpenTelemetry SDK', () => {
  it('serves a tool call and records nothing: the spans are no-ops and no context is kept', async () => {
    expect(trace.getTracerProvider()).toBeDefined();
    const seen: { active?: unknown } = {};
    const response = await toolset(seen).deliver(call, { principal, sessionId: null, protocolVersion: '2025-11-25' });
    expect(response).toMatchObject({ result: { content: [{ type: 'text', text: '5' }] } });
    expect(seen.active).toBeUndefined();
    const span = startExchangeSpan('server', { method: 'tools/call', params: call.params }, ROOT_CONTEXT);
    expect(span.span.isRecording()).toBe(false);
    expect(span.traceId).toBeNull();
    span.end({ isError: true });
    await expect(withAuditCommitSpan(3, [], async () => 'committed')).resolves.toBe('committed');
    await expect(withInternalSpan('x', {}, async () => 7)).resolves.toBe(7);
    expect(activeTraceId()).toBeNull();
  });

  it('is inactive until a tracer provider, a propagator or a meter provider is registered', () => {
    expect(mcpTelemetryActive()).toBe(false);
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    expect(mcpTelemetryActive()).toBe(true);
    trace.disable();
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    expect(mcpTelemetryActive()).toBe(true);
    propagation.disable();
    metrics.setGlobalMeterProvider(new MeterProvider());
    expect(mcpTelemetryActive()).toBe(true);
    metrics.disable();
    expect(mcpTelemetryActive()).toBe(false);
    // A registered diagnostic logger alone makes the API's globals, and sees no span.
    diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.ERROR);
    expect(mcpTelemetryActive()).toBe(false);
    diag.disable();
  });

  it('without a propagator, a traceparent in _meta is not read', () => {
    expect(
      trace.getSpanContext(extractInboundContext({ _meta: { traceparent: PARENT } }, {}, ROOT_CONTEXT)),
    ).toBeUndefined();
  });
});

describe('telemetry with the SDK registered', () => {
  let telemetry: ReturnType<typeof installTestTelemetry>;
  beforeAll(() => (telemetry = installTestTelemetry()));
  afterAll(async () => {
    await telemetry.shutdown();
    expect(metrics.getMeterProvider()).not.toBeUndefined();
  });
  beforeEach(() => telemetry.resetSpans());

  it('runs a tool handler inside an execute_tool span, child of the active span', async () => {
    const seen: { active?: unknown } = {};
    const parent = trace.getTracer('spec').startSpan('caller');
    await context.with(trace.setSpan(context.active(), parent), () =>
      toolset(seen).deliver(call, { principal, sessionId: null, protocolVersion: '2025-11-25' }),
    );
    parent.end();
    const handler = telemetry.spans().find((span) => span.name === 'execute_tool add');
    expect(handler).toMatchObject({
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.tool.name': 'add', 'gen_ai.operation.name': 'execute_tool' },
    });
    expect(handler?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect((seen.active as { spanContext(): { spanId: string } }).spanContext().spanId).toBe(
      handler?.spanContext().spanId,
    );
  });

  it('names a server span after the method and tool, keeps arguments out by default and adds them with recordPayloads', () => {
    const parent = extractInboundContext({ _meta: { traceparent: PARENT } }, {}, ROOT_CONTEXT);
    startExchangeSpan(
      'server',
      { method: 'tools/call', requestId: 1, params: call.params, sessionId: 'secret-session', transport: 'tcp' },
      parent,
    ).end({ isError: true });
    const options = { recordPayloads: true, maxPayloadLength: 20 };
    startExchangeSpan('server', { method: 'tools/call', requestId: 2, params: call.params }, parent, options).end({
      response: { content: [{ type: 'text', text: 'x'.repeat(100) }] },
    });
    const [plain, withPayloads] = telemetry.spans();
    expect(plain.name).toBe('tools/call add');
    expect(plain.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(plain.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(plain.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': '1',
      'gen_ai.tool.name': 'add',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'error.type': 'tool_error',
    });
    expect(plain.attributes['mcp.session.id']).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(plain.attributes)).not.toContain('secret-session');
    expect(plain.attributes['mcp.request.params']).toBeUndefined();
    expect(plain.status.code).toBe(SpanStatusCode.ERROR);
    expect(withPayloads.attributes['mcp.request.params']).toBe('{"name":"add","argu…');
    expect(String(withPayloads.attributes['mcp.response.result'])).toHaveLength(20);
    expect(withPayloads.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('marks a JSON-RPC error with its code and a thrown failure with its class', async () => {
    startExchangeSpan('client', { method: 'tools/list' }, ROOT_CONTEXT).end({ errorCode: -32601 });
    await expect(withInternalSpan('work', {}, async () => Promise.reject(new TypeError('bad')))).rejects.toThrow('bad');
    const [rpc, thrown] = telemetry.spans();
    expect(rpc.attributes).toMatchObject({ 'error.type': '-32601', 'rpc.response.status_code': '-32601' });
    expect(thrown.attributes['error.type']).toBe('TypeError');
    expect(thrown.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('records the operation duration histograms by method, tool and error type', async () => {
    startExchangeSpan('server', { method: 'tools/call', params: { name: 'add' } }, ROOT_CONTEXT).end({});
    startExchangeSpan('server', { method: 'tools/call', params: { name: 'add' } }, ROOT_CONTEXT).end({ isError: true });
    const points = pointsOf(await telemetry.metrics(), 'mcp.server.operation.duration');
    const byOutcome = Object.fromEntries(
      points.map((point) => [String(point.attributes['error.type'] ?? 'ok'), point]),
    );
    expect(byOutcome.ok.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'add' });
    // The histogram is cumulative over the file: the answered call of the recordPayloads test above has
    // the same attributes as the one here, so two; the failed one there carries a transport, so its own point.
    expect((byOutcome.ok.value as { count: number }).count).toBe(2);
    expect((byOutcome.tool_error.value as { count: number }).count).toBe(1);
  });

  it('keeps the name of a tool the server refused (unknown) out of the metrics, and cuts long names', async () => {
    const long = 'x'.repeat(300);
    const refused = startExchangeSpan('server', { method: 'tools/call', params: { name: long } }, ROOT_CONTEXT);
    refused.end({ errorCode: -32602 });
    const [span] = telemetry.spans();
    expect(span.name).toBe(`tools/call ${'x'.repeat(128)}`);
    const points = pointsOf(await telemetry.metrics(), 'mcp.server.operation.duration').filter(
      (point) => point.attributes['error.type'] === '-32602',
    );
    expect(points).toHaveLength(1);
    expect(points[0].attributes['gen_ai.tool.name']).toBeUndefined();
  });

  it('propagation is the global one the suite registered', () => {
    expect(propagation.fields()).toEqual(expect.arrayContaining(['traceparent', 'tracestate', 'baggage']));
  });
});
