import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { DataSource } from 'typeorm';
import { getMcpStdioEndpointToken } from '../../src/mcp/mcp.constants';
import { NdjsonDecoder } from '../../src/mcp/protocol/ndjson';
import type { McpStdioEndpoint } from '../../src/mcp/server/stdio/mcp-stdio.endpoint';
import { StdioFixtureModule } from '../fixtures/stdio-serve/stdio-serve-tools';
import { pollUntil } from '../support/polling';
import { installTestTelemetry, type TestTelemetry } from '../support/telemetry';

type Frame = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions

const STATELESS_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A W3C trace context of a caller: its trace id, its span id, and the traceparent carrying them. */
function caller(n: number) {
  const traceId = n.toString(16).padStart(32, '0');
  const spanId = n.toString(16).padStart(16, '0');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/**
 * The stdio connection with the OpenTelemetry SDK registered: one SERVER span per message, as
 * over HTTP, under the trace context of the message's `_meta`, on both revisions, with the
 * outcome its audit row records and the audit row carrying the caller's trace id.
 */
describe('OpenTelemetry spans of messages served over stdio (in process)', () => {
  let telemetry: TestTelemetry;
  let app: INestApplicationContext;
  let endpoint: McpStdioEndpoint;

  beforeAll(async () => {
    telemetry = installTestTelemetry();
    const moduleRef = await Test.createTestingModule({ imports: [StdioFixtureModule] }).compile();
    app = await moduleRef.init();
    endpoint = app.get<McpStdioEndpoint>(getMcpStdioEndpointToken(), { strict: false });
  });

  afterAll(async () => {
    await app?.close();
    await telemetry?.shutdown();
  });

  function open() {
    const frames: Frame[] = [];
    const connection = endpoint.connect({ key: 'local', label: 'Local user', scopes: [], raw: null }, (json) =>
      frames.push(JSON.parse(json) as Frame),
    );
    const decoder = new NdjsonDecoder({ line: (line) => connection.receive(line), overflow: () => undefined }, 1 << 20);
    const send = (message: unknown) => decoder.push(`${JSON.stringify(message)}\n`);
    const answer = (id: string | number) =>
      pollUntil(`answer ${id}`, () => frames.find((f) => f.id === id && ('result' in f || 'error' in f)));
    return { connection, send, answer };
  }

  const spansOf = (traceId: string) =>
    pollUntil(`the span of ${traceId}`, () => {
      const found = telemetry.spans().filter((span) => span.spanContext().traceId === traceId);
      return found.some((span) => span.kind === SpanKind.SERVER) ? found : undefined;
    });
  const server = (spans: ReadableSpan[]) => spans.filter((span) => span.kind === SpanKind.SERVER);

  it('a 2025 session call: a SERVER span under the _meta traceparent, with the session digest, and the audit row in its trace', async () => {
    const peer = open();
    peer.send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'otel', version: '1' } },
    });
    await peer.answer('init');
    const trace = caller(1);
    peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'traced' }, _meta: { traceparent: trace.traceparent } },
    });
    await peer.answer(1);
    await peer.connection.settled();
    const [span] = server(await spansOf(trace.traceId));
    expect(span.name).toBe('tools/call echo');
    expect(span.parentSpanContext?.spanId).toBe(trace.spanId);
    expect(span.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
      'mcp.mount': 'default',
    });
    expect(span.attributes['mcp.session.id']).toMatch(/^[0-9a-f]{32}$/);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    // The tool's own span is a child of the SERVER span.
    const tool = (await spansOf(trace.traceId)).find((s) => s.name === 'execute_tool echo');
    expect(tool?.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
    const rows = await app
      .get(DataSource)
      .query<Frame[]>(`SELECT method FROM mcp_events WHERE trace_id = ?`, [trace.traceId]);
    expect(rows).toEqual([{ method: 'tools/call' }]);
    await peer.connection.end();
  });

  it('a 2026-07-28 request: a SERVER span with the revision and no session; a refusal marks it with the error code', async () => {
    const peer = open();
    const ok = caller(2);
    peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' }, _meta: { ...STATELESS_META, traceparent: ok.traceparent } },
    });
    await peer.answer(1);
    const refused = caller(3);
    peer.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'nope', arguments: {}, _meta: { ...STATELESS_META, traceparent: refused.traceparent } },
    });
    await peer.answer(2);
    await peer.connection.settled();
    const [span] = server(await spansOf(ok.traceId));
    expect(span.attributes).toMatchObject({
      'mcp.protocol.version': '2026-07-28',
      'network.transport': 'pipe',
      'gen_ai.tool.name': 'echo',
    });
    expect(span.attributes['mcp.session.id']).toBeUndefined();
    const [failed] = server(await spansOf(refused.traceId));
    expect(failed.attributes['error.type']).toBe('-32602');
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
    await peer.connection.end();
  });
});
