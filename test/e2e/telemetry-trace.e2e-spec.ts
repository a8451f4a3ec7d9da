import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { McpClientModule, McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { RelayTools } from '../fixtures/telemetry/relay-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { callRequest, post } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';
import { installTestTelemetry, pointsOf, randomTraceparent, type TestTelemetry } from '../support/telemetry';
import { trace } from '@opentelemetry/api';
import { McpClientService } from '../../src/mcp';
import { killAllWorkers, startWorker, type WorkerProcess } from '../fixtures/client/worker-process';

jest.setTimeout(60_000);

type EventRow = {
  direction: string;
  method: string;
  trace_id: string | null;
  request: { params?: { name?: string; _meta?: Record<string, unknown> } };
};

/**
 * Server A (PostgreSQL) serves `relay`, which calls `echo` on server B through McpClientService
 * on a Bull queue (real Redis, worker in A's app). The official SDK client calls A with a
 * traceparent in `_meta`; every span of the hop and every audit row carries the caller's trace.
 */
describe('OpenTelemetry: one trace from the caller through A, the Bull queue and B', () => {
  const prefix = `mcp-otel-${randomBytes(4).toString('hex')}`;
  let telemetry: TestTelemetry;
  let dbA: TestDatabase;
  let dbB: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    telemetry = installTestTelemetry();
    [dbA, dbB] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    b = await startApp(dbB.url, { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] });
    a = await startApp(dbA.url, {
      imports: [
        McpModule.forRoot({ auth: fixtureAuth }),
        McpClientModule.forRoot({
          servers: {
            b: { url: `${b.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2025-11-25' },
            b2026: { url: `${b.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2026-07-28' },
          },
          redis: TEST_REDIS_URL,
          queue: { name: 'otel-calls', prefix },
        }),
      ],
      providers: [RelayTools],
    });
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await deleteRedisKeys(`${prefix}:*`);
    await Promise.all([dbA?.drop(), dbB?.drop()]);
    await telemetry?.shutdown();
  });

  beforeEach(() => telemetry.resetSpans());

  function spansOf(traceId: string): ReadableSpan[] {
    return telemetry.spans().filter((span) => span.spanContext().traceId === traceId);
  }

  function one(spans: ReadableSpan[], name: string, kind: SpanKind): ReadableSpan {
    const found = spans.filter((span) => span.name === name && span.kind === kind);
    if (found.length !== 1)
      throw new Error(
        `expected one ${SpanKind[kind]} span "${name}", got ${found.length}: ${spans.map((s) => `${SpanKind[s.kind]} ${s.name}`).join(', ')}`,
      );
    return found[0];
  }

  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const idOf = (span: ReadableSpan) => span.spanContext().spanId;

  async function rows(db: TestDatabase, traceId: string): Promise<EventRow[]> {
    return db.dataSource.query(
      `SELECT direction, method, trace_id, request FROM mcp_events WHERE trace_id = $1 ORDER BY direction, method, created_at`,
      [traceId],
    );
  }

  /** Waits for the spans the test expects (the server spans end after the response left). */
  async function traced(traceId: string, names: string[]): Promise<ReadableSpan[]> {
    return pollUntil(`spans ${names.join(', ')}`, () => {
      const spans = spansOf(traceId);
      return names.every((name) => spans.some((span) => span.name === name)) ? spans : undefined;
    });
  }

  it('continues the _meta traceparent of an SDK 1.x tools/call through the Bull queue to B, and both sides store the trace id', async () => {
    const caller = randomTraceparent();
    const transport = new StreamableHTTPClientTransport(new URL(`${a.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'otel-e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: 'relay',
        arguments: { text: 'traced', via: 'b' },
        _meta: { traceparent: caller.traceparent, baggage: 'tenant=acme' },
      });
      expect(result.content).toEqual([{ type: 'text', text: 'traced' }]);
    } finally {
      await client.close();
    }

    const spans = await traced(caller.traceId, [
      'tools/call relay',
      'execute_tool relay',
      'mcp.queue.wait',
      'tools/call echo',
      'execute_tool echo',
    ]);
    const serverA = one(spans, 'tools/call relay', SpanKind.SERVER);
    const handlerA = one(spans, 'execute_tool relay', SpanKind.INTERNAL);
    const queueWait = one(spans, 'mcp.queue.wait', SpanKind.INTERNAL);
    const clientCall = one(spans, 'tools/call echo', SpanKind.CLIENT);
    const serverB = one(spans, 'tools/call echo', SpanKind.SERVER);
    const handlerB = one(spans, 'execute_tool echo', SpanKind.INTERNAL);
    expect(parentOf(serverA)).toBe(caller.spanId);
    expect(parentOf(handlerA)).toBe(idOf(serverA));
    expect(parentOf(queueWait)).toBe(idOf(handlerA));
    expect(parentOf(clientCall)).toBe(idOf(handlerA));
    expect(parentOf(serverB)).toBe(idOf(clientCall));
    expect(parentOf(handlerB)).toBe(idOf(serverB));
    expect(queueWait.attributes).toMatchObject({
      'messaging.system': 'bull',
      'mcp.server.name': 'b',
      'mcp.method.name': 'tools/call',
    });

    expect(serverA.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'relay',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'mcp.mount': 'default',
    });
    expect(serverA.attributes['jsonrpc.request.id']).toEqual(expect.any(String));
    expect(serverA.attributes['mcp.session.id']).toMatch(/^[0-9a-f]{32}$/);
    expect(serverA.status.code).toBe(SpanStatusCode.UNSET);
    expect(clientCall.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'mcp.server.name': 'b',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(b.baseUrl).port),
    });
    // The same session on both ends of the hop: the digests match.
    expect(serverB.attributes['mcp.session.id']).toBe(clientCall.attributes['mcp.session.id']);
    // Arguments stay out of the spans by default.
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('traced');

    const rowsA = await rows(dbA, caller.traceId);
    expect(rowsA.map((row) => `${row.direction} ${row.method} ${row.request.params?.name ?? ''}`)).toEqual([
      'inbound tools/call relay',
      'outbound tools/call echo',
    ]);
    // The outbound request carried the client span's context (and the caller's baggage) in _meta.
    const outbound = rowsA[1].request.params?._meta ?? {};
    expect(outbound.traceparent).toBe(`00-${caller.traceId}-${idOf(clientCall)}-01`);
    expect(outbound.baggage).toBe('tenant=acme');
    // B's rows: the call, and the handshake the call opened its session with (the HTTP headers carried the trace).
    const rowsB = await rows(dbB, caller.traceId);
    expect(rowsB.map((row) => `${row.direction} ${row.method} ${row.request.params?.name ?? ''}`)).toEqual([
      'inbound initialize ',
      'inbound notifications/initialized ',
      'inbound tools/call echo',
    ]);
  });

  it('continues the trace of a 2026-07-28 stateless call, inbound on A and outbound to B', async () => {
    const caller = randomTraceparent();
    const body = statelessRequest(7, 'tools/call', {
      name: 'relay',
      arguments: { text: 'stateless', via: 'b2026' },
      _meta: { traceparent: caller.traceparent },
    });
    const reply = await statelessPost(`${a.baseUrl}/mcp`, body);
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ result: { content: [{ type: 'text', text: 'stateless' }] } });

    const spans = await traced(caller.traceId, ['tools/call relay', 'tools/call echo', 'execute_tool echo']);
    const serverA = one(spans, 'tools/call relay', SpanKind.SERVER);
    const clientCall = one(spans, 'tools/call echo', SpanKind.CLIENT);
    const serverB = one(spans, 'tools/call echo', SpanKind.SERVER);
    expect(parentOf(serverA)).toBe(caller.spanId);
    expect(parentOf(serverB)).toBe(idOf(clientCall));
    expect(serverA.attributes['mcp.protocol.version']).toBe('2026-07-28');
    expect(serverA.attributes['mcp.session.id']).toBeUndefined();
    expect(serverB.attributes['mcp.protocol.version']).toBe('2026-07-28');
    expect(clientCall.attributes['mcp.protocol.version']).toBe('2026-07-28');
    // The revision probe and the tool list (for the Mcp-Param headers) belong to the call's trace too.
    expect((await rows(dbA, caller.traceId)).map((row) => `${row.direction} ${row.method}`)).toEqual([
      'inbound tools/call',
      'outbound server/discover',
      'outbound tools/call',
      'outbound tools/list',
    ]);
    expect((await rows(dbB, caller.traceId)).map((row) => `${row.direction} ${row.method}`)).toEqual([
      'inbound server/discover',
      'inbound tools/call',
      'inbound tools/list',
    ]);
  });

  it('honours the HTTP traceparent header when _meta has none, and prefers _meta when both carry one', async () => {
    const header = randomTraceparent();
    const meta = randomTraceparent();
    const headerOnly = statelessRequest(8, 'tools/call', { name: 'echo', arguments: { text: 'h' } });
    // A has no echo tool: the call is an error answer, still traced and audited.
    const plain = await statelessPost(`${b.baseUrl}/mcp`, headerOnly, { headers: { traceparent: header.traceparent } });
    expect(plain.status).toBe(200);
    const both = statelessRequest(9, 'tools/call', {
      name: 'echo',
      arguments: { text: 'm' },
      _meta: { traceparent: meta.traceparent },
    });
    await statelessPost(`${b.baseUrl}/mcp`, both, { headers: { traceparent: header.traceparent } });
    const fromHeader = one(await traced(header.traceId, ['tools/call echo']), 'tools/call echo', SpanKind.SERVER);
    expect(parentOf(fromHeader)).toBe(header.spanId);
    const fromMeta = one(await traced(meta.traceId, ['tools/call echo']), 'tools/call echo', SpanKind.SERVER);
    expect(parentOf(fromMeta)).toBe(meta.spanId);
    expect(spansOf(header.traceId).filter((span) => span.kind === SpanKind.SERVER)).toHaveLength(1);
    expect((await rows(dbB, header.traceId)).map((row) => row.request.params?.name)).toEqual(['echo']);
    expect((await rows(dbB, meta.traceId)).map((row) => row.request.params?.name)).toEqual(['echo']);
  });

  it('marks a failing call: a JSON-RPC error and a tool error set error.type and status ERROR', async () => {
    const caller = randomTraceparent();
    await statelessPost(
      `${b.baseUrl}/mcp`,
      statelessRequest(10, 'tools/call', { name: 'fail', arguments: {}, _meta: { traceparent: caller.traceparent } }),
    );
    await statelessPost(
      `${b.baseUrl}/mcp`,
      statelessRequest(11, 'tools/call', {
        name: 'missing',
        arguments: {},
        _meta: { traceparent: caller.traceparent },
      }),
    );
    const spans = await traced(caller.traceId, ['tools/call fail', 'tools/call missing']);
    const toolError = one(spans, 'tools/call fail', SpanKind.SERVER);
    expect(toolError.attributes['error.type']).toBe('tool_error');
    expect(toolError.status.code).toBe(SpanStatusCode.ERROR);
    expect(one(spans, 'execute_tool fail', SpanKind.INTERNAL).attributes['error.type']).toBe('Error');
    const unknown = one(spans, 'tools/call missing', SpanKind.SERVER);
    expect(unknown.attributes['error.type']).toBe('-32602');
    expect(unknown.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('reports the Bull queue: its depth by state (read from Redis) and the wait of its jobs', async () => {
    await a.app.get(McpClientService).callTool('b', 'echo', { text: 'counted' });
    const all = await telemetry.metrics();
    const depth = pointsOf(all, 'mcp.client.queue.depth').filter(
      (p) => p.attributes['mcp.queue.name'] === 'otel-calls',
    );
    expect(depth.map((p) => p.attributes['mcp.queue.state']).sort()).toEqual(['active', 'delayed', 'waiting']);
    expect(depth.every((p) => typeof p.value === 'number' && p.value >= 0)).toBe(true);
    const waits = pointsOf(all, 'mcp.client.queue.wait.duration').filter(
      (p) => p.attributes['messaging.system'] === 'bull',
    );
    expect(waits.reduce((sum, p) => sum + (p.value as { count: number }).count, 0)).toBeGreaterThanOrEqual(1);
  });

  it('marks a request refused before any exchange (an unknown session) with its HTTP status', async () => {
    const caller = randomTraceparent();
    const reply = await post(`${b.baseUrl}/mcp`, callRequest(12, 'echo', { text: 'x' }), {
      sessionId: 'no-such-session',
      headers: { traceparent: caller.traceparent, 'MCP-Protocol-Version': '2025-11-25' },
    });
    expect(reply.status).toBe(404);
    const refused = one(await traced(caller.traceId, ['tools/call echo']), 'tools/call echo', SpanKind.SERVER);
    expect(refused.attributes['error.type']).toBe('404');
    expect(refused.status.code).toBe(SpanStatusCode.ERROR);
  });
});

/**
 * The worker is another process (context manager and W3C propagators, no tracer provider): the job carries the
 * caller's context through Redis, the worker's request to B carries it on, and the worker's audit
 * row stores the caller's trace id.
 */
describe("OpenTelemetry: a Bull job continues the caller's trace in another process", () => {
  const prefix = `mcp-otel-w-${randomBytes(4).toString('hex')}`;
  let telemetry: TestTelemetry;
  let db: TestDatabase;
  let b: RunningApp;
  let caller: RunningApp;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    telemetry = installTestTelemetry();
    db = await createTestDatabase();
    b = await startApp(db.url, { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] });
    const client = {
      servers: { b: { url: `${b.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2025-11-25' as const } },
      redis: TEST_REDIS_URL,
      queue: { name: 'otel-remote', prefix },
    };
    caller = await startApp(db.url, {
      imports: [McpClientModule.forRoot({ ...client, queue: { ...client.queue, worker: false } })],
    });
    worker = await startWorker({ databaseUrl: db.url, client, propagators: true });
  });

  afterAll(async () => {
    await worker?.stop().catch(() => undefined);
    await killAllWorkers();
    await caller?.close();
    await b?.close();
    await deleteRedisKeys(`${prefix}:*`);
    await db?.drop();
    await telemetry?.shutdown();
  });

  it("links the caller's span, through the worker process, to the server span on B", async () => {
    const client = caller.app.get(McpClientService);
    const { traceId, spanId } = await trace.getTracer('spec').startActiveSpan('caller', async (span) => {
      try {
        expect((await client.callTool('b', 'echo', { text: 'far' })).content).toEqual([{ type: 'text', text: 'far' }]);
        return span.spanContext();
      } finally {
        span.end();
      }
    });
    const serverB = await pollUntil('server span on B', () =>
      telemetry
        .spans()
        .find(
          (span) =>
            span.kind === SpanKind.SERVER && span.name === 'tools/call echo' && span.spanContext().traceId === traceId,
        ),
    );
    // The worker records nothing (no SDK): its hop is transparent and B's span hangs under the caller's.
    expect(serverB.parentSpanContext?.spanId).toBe(spanId);
    const outbound: EventRow[] = await db.dataSource.query(
      `SELECT direction, method, trace_id, request FROM mcp_events WHERE direction = 'outbound' AND method = 'tools/call'`,
    );
    expect(outbound.map((row) => row.trace_id)).toEqual([traceId]);
    expect(outbound[0].request.params?._meta?.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });
});
