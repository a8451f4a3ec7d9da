import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { installTestTelemetry, type TestTelemetry } from '../../../../test/support/telemetry';
import { sessionIdAttribute } from '../../telemetry/mcp-spans';
import type { McpResolvedTelemetryOptions } from '../../telemetry/mcp-telemetry.options';
import { SESSION_END_SPAN, startInboundSpan, startSessionHttpSpan, STREAM_OPEN_SPAN } from './mcp-inbound-span';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('startSessionHttpSpan without an OpenTelemetry SDK', () => {
  it('is a no-op span: nothing is recorded', () => {
    const span = startSessionHttpSpan(SESSION_END_SPAN, 'DELETE', { 'mcp-session-id': 's-1' }, 'mcp');
    expect(trace.getSpan(span.context)?.isRecording()).toBe(false);
    span.end(204);
  });
});

describe('startSessionHttpSpan with the OpenTelemetry SDK', () => {
  let telemetry: TestTelemetry;
  beforeAll(() => {
    telemetry = installTestTelemetry();
  });
  afterAll(() => telemetry.shutdown());
  beforeEach(() => telemetry.resetSpans());

  it("records a SERVER span under the headers' traceparent with the digest of the session id, the host and the status", () => {
    const span = startSessionHttpSpan(
      STREAM_OPEN_SPAN,
      'GET',
      { traceparent: PARENT, host: '[::1]:3000', 'mcp-session-id': 'secret-id', 'mcp-protocol-version': '2025-11-25' },
      'mcp',
      '127.0.0.1',
      { 'mcp.stream.resumed': false },
    );
    span.end(200);
    span.end(500); // ended once: the second call changes nothing
    const [recorded] = telemetry.spans();
    expect(telemetry.spans()).toHaveLength(1);
    expect(recorded.name).toBe('mcp.stream.open');
    expect(recorded.kind).toBe(SpanKind.SERVER);
    expect(recorded.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(recorded.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(recorded.attributes).toEqual({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'mcp.mount': 'mcp',
      'mcp.protocol.version': '2025-11-25',
      'mcp.session.id': sessionIdAttribute('secret-id'),
      'mcp.stream.resumed': false,
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '::1',
      'server.port': 3000,
      'client.address': '127.0.0.1',
    });
    expect(recorded.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("marks a failure with no answer with the error's class name and its message", () => {
    const span = startSessionHttpSpan(SESSION_END_SPAN, 'DELETE', {}, 'mcp');
    span.end(null, new RangeError('database went away'));
    const [recorded] = telemetry.spans();
    expect(recorded.attributes['error.type']).toBe('RangeError');
    expect(recorded.attributes['http.response.status_code']).toBeUndefined();
    expect(recorded.attributes['mcp.session.id']).toBeUndefined();
    expect(recorded.status).toEqual({ code: SpanStatusCode.ERROR, message: 'database went away' });
    expect(recorded.events.map((event) => event.name)).toEqual(['exception']);
  });

  it('marks a refusal with its HTTP status', () => {
    const span = startSessionHttpSpan(SESSION_END_SPAN, 'DELETE', { 'mcp-session-id': 'gone' }, 'mcp');
    span.end(404);
    const [recorded] = telemetry.spans();
    expect(recorded.attributes).toMatchObject({ 'error.type': '404', 'http.response.status_code': 404 });
    expect(recorded.status.code).toBe(SpanStatusCode.ERROR);
  });
});

describe('startInboundSpan', () => {
  let telemetry: TestTelemetry;
  beforeAll(() => {
    telemetry = installTestTelemetry();
  });
  afterAll(() => telemetry.shutdown());
  beforeEach(() => telemetry.resetSpans());

  it('names the span after the method, takes the parent from the headers and the host without a port', () => {
    const exchange = startInboundSpan(
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { traceparent: PARENT, host: 'example.com' },
      'mcp',
      null as unknown as McpResolvedTelemetryOptions,
      '10.0.0.1',
    );
    exchange.span.end();
    const [recorded] = telemetry.spans();
    expect(recorded.name).toBe('tools/list');
    expect(recorded.kind).toBe(SpanKind.SERVER);
    expect(recorded.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(recorded.attributes).toMatchObject({
      'mcp.mount': 'mcp',
      'server.address': 'example.com',
      'client.address': '10.0.0.1',
    });
    expect(recorded.attributes['server.port']).toBeUndefined();
  });

  it('a response message (no method) and an unparseable Host give a span without server address', () => {
    const exchange = startInboundSpan(
      { jsonrpc: '2.0', id: 3, result: {} },
      { host: 'bad:host:name' },
      'mcp',
      null as unknown as McpResolvedTelemetryOptions,
    );
    exchange.span.end();
    const [recorded] = telemetry.spans();
    expect(recorded.name).toBe('mcp response');
    expect(recorded.attributes['server.address']).toBeUndefined();
  });

  it('takes the MCP headers the caller already read instead of reading them again', () => {
    const exchange = startInboundSpan(
      { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      { 'mcp-session-id': 'from-headers', 'mcp-protocol-version': '2025-06-18' },
      'mcp',
      null as unknown as McpResolvedTelemetryOptions,
      undefined,
      { sessionIdHeader: 's-read', protocolVersionHeader: '2025-11-25' },
    );
    exchange.span.end();
    const [recorded] = telemetry.spans();
    expect(recorded.attributes['mcp.protocol.version']).toBe('2025-11-25');
    expect(recorded.attributes['mcp.session.id']).toBe(sessionIdAttribute('s-read'));
  });
});
