import { join } from 'node:path';
import { SpanKind, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import {
  answerHandshake,
  startScriptedHttpServer,
  type ScriptedHttpServer,
  type ScriptedReply,
} from '../fixtures/http/scripted-http-server';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { installTestTelemetry, pointsOf, randomTraceparent, type TestTelemetry } from '../support/telemetry';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { TaskTools } from '../fixtures/tasks/task-tools';

jest.setTimeout(60_000);

const statelessStdio = [process.execPath, join(__dirname, '../fixtures/stateless-peers/stateless-stdio-server.js')];

/** A scripted 2025-11-25 server: initialize, its notification, and tools/call answered with the text it got. */
function scripted(server: ScriptedHttpServer): void {
  const dispatch: ScriptedReply = (res, body) => {
    if (answerHandshake(res, body, 'sess-1', '1')) return;
    const text = (body?.params as { arguments?: { text?: string } } | undefined)?.arguments?.text ?? '';
    return void res
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: body?.id, result: { content: [{ type: 'text', text }] } }));
  };
  for (let i = 0; i < 20; i++) server.reply(dispatch);
}

/**
 * The client's side (inline queue): what an outbound request carries to a server that records
 * what it received, the opt-in payload attributes, stdio spans, and the metrics of the package.
 */
describe('OpenTelemetry: outbound propagation, payload opt-in and metrics', () => {
  let telemetry: TestTelemetry;
  let db: TestDatabase;
  let remote: ScriptedHttpServer;
  let app: RunningApp;
  let client: McpClientService;

  beforeAll(async () => {
    telemetry = installTestTelemetry();
    db = await createTestDatabase();
    remote = await startScriptedHttpServer();
    scripted(remote);
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          advanced: { telemetry: { recordPayloads: true, maxPayloadLength: 256 } },
        }),
        McpClientModule.forRoot({
          servers: {
            scripted: { url: remote.url, version: '2025-11-25' },
            pooled: {
              command: statelessStdio,
              env: { STATELESS_PEER_LEGACY: 'reject' },
              stateless: true,
              pool: { max: 1, idleMs: 30_000 },
            },
          },
          advanced: { telemetry: { recordPayloads: true } },
        }),
      ],
      providers: [FixtureTools, TaskTools],
    });
    client = app.app.get(McpClientService);
  });

  afterAll(async () => {
    await app?.close();
    await remote?.close();
    await db?.drop();
    await telemetry?.shutdown();
  });

  function inNewTrace<T>(work: () => Promise<T>): Promise<{ value: T; traceId: string }> {
    return trace.getTracer('spec').startActiveSpan('caller', async (span) => {
      try {
        return { value: await work(), traceId: span.spanContext().traceId };
      } finally {
        span.end();
      }
    });
  }

  function clientSpan(traceId: string, name: string): Promise<ReadableSpan> {
    return pollUntil(name, () =>
      telemetry
        .spans()
        .find((span) => span.spanContext().traceId === traceId && span.kind === SpanKind.CLIENT && span.name === name),
    );
  }

  it('puts the client span in params._meta and in the traceparent header of the HTTP request, and records payloads when asked', async () => {
    const { value, traceId } = await inNewTrace(() => client.callTool('scripted', 'echo', { text: 'sent along' }));
    expect(value.content).toEqual([{ type: 'text', text: 'sent along' }]);
    const span = await clientSpan(traceId, 'tools/call echo');
    const expected = `00-${traceId}-${span.spanContext().spanId}-01`;
    const call = remote.received.find((request) => request.body?.method === 'tools/call');
    expect(call?.headers.traceparent).toBe(expected);
    expect((call?.body?.params as { _meta?: Record<string, unknown> })._meta).toEqual({ traceparent: expected });
    // The handshake went out under the same span: its headers carry it too.
    expect(remote.received.find((request) => request.body?.method === 'initialize')?.headers.traceparent).toBe(
      expected,
    );
    expect(span.attributes['mcp.request.params']).toContain('sent along');
    expect(span.attributes['mcp.response.result']).toContain('sent along');
    const [row] = await db.dataSource.query(
      `SELECT trace_id FROM mcp_events WHERE direction = 'outbound' AND method = 'tools/call' AND server = 'scripted'`,
    );
    expect(row.trace_id).toBe(traceId);
  });

  it('records the arguments on the server span of a mount with recordPayloads', async () => {
    const reply = await statelessPost(
      `${app.baseUrl}/mcp`,
      statelessRequest(1, 'tools/call', { name: 'echo', arguments: { text: 'visible payload' } }),
    );
    expect(reply.status).toBe(200);
    const span = await pollUntil('server span', () =>
      telemetry.spans().find((s) => s.kind === SpanKind.SERVER && s.name === 'tools/call echo'),
    );
    expect(span.attributes['mcp.request.params']).toContain('visible payload');
    expect(span.attributes['mcp.response.result']).toContain('visible payload');
  });

  it('spawns a pooled stdio server under spans, with _meta trace context on the line it wrote', async () => {
    const { value, traceId } = await inNewTrace(() => client.callTool('pooled', 'echo', { text: 'over stdio' }));
    expect(value.content).toEqual([{ type: 'text', text: 'over stdio' }]);
    const span = await clientSpan(traceId, 'tools/call echo');
    expect(span.attributes['network.transport']).toBe('pipe');
    const inTrace = telemetry.spans().filter((s) => s.spanContext().traceId === traceId);
    // The first exchange of the call (the revision probe, or the call itself) checked out a process and spawned it.
    const clientSpans = new Set(inTrace.filter((s) => s.kind === SpanKind.CLIENT).map((s) => s.spanContext().spanId));
    const checkouts = inTrace.filter((s) => s.name === 'mcp.stdio.pool.checkout');
    const spawns = inTrace.filter((s) => s.name === 'mcp.stdio.spawn');
    // The revision probe and the call each checked the one pooled process out.
    expect(checkouts).toHaveLength(2);
    expect(spawns).toHaveLength(1);
    expect([...checkouts, ...spawns].every((s) => clientSpans.has(s.parentSpanContext?.spanId as string))).toBe(true);
    const [row] = await db.dataSource.query(
      `SELECT trace_id, request FROM mcp_events WHERE direction = 'outbound' AND method = 'tools/call' AND server = 'pooled'`,
    );
    expect(row.trace_id).toBe(traceId);
    expect(row.request.params._meta.traceparent).toBe(`00-${traceId}-${span.spanContext().spanId}-01`);
  });

  it('runs a task under the trace of the tools/call that created it', async () => {
    const caller = randomTraceparent();
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const sdk = new Client(
      { name: 'otel-task', version: '1.0.0' },
      { capabilities: { tasks: { list: {}, cancel: {} } } },
    );
    await sdk.connect(transport);
    try {
      const { task } = await sdk.request(
        {
          method: 'tools/call',
          params: {
            name: 'only_task',
            arguments: {},
            task: { ttl: 60_000 },
            _meta: { traceparent: caller.traceparent },
          },
        },
        CreateTaskResultSchema,
      );
      expect(task.status).toBe('working');
    } finally {
      await sdk.close();
    }
    const spans = await pollUntil('the task run', () => {
      const inTrace = telemetry.spans().filter((s) => s.spanContext().traceId === caller.traceId);
      return inTrace.some((s) => s.name === 'execute_tool only_task') ? inTrace : undefined;
    });
    const created = spans.find((s) => s.kind === SpanKind.SERVER && s.name === 'tools/call only_task');
    const run = spans.find((s) => s.name === 'mcp.task.run');
    const handler = spans.find((s) => s.name === 'execute_tool only_task');
    expect(run?.parentSpanContext?.spanId).toBe(created?.spanContext().spanId);
    expect(handler?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
  });

  it('reports the duration histograms by method, tool and outcome, and the queue, session, audit and stdio metrics', async () => {
    await client.callTool('scripted', 'echo', { text: 'again' });
    await statelessPost(`${app.baseUrl}/mcp`, statelessRequest(2, 'tools/call', { name: 'fail', arguments: {} }));
    const all = await pollUntil('metrics', async () => {
      const collected = await telemetry.metrics();
      return pointsOf(collected, 'mcp.audit.commit.batch.size').length ? collected : undefined;
    });
    const server = pointsOf(all, 'mcp.server.operation.duration');
    const echo = server.find(
      (p) => p.attributes['gen_ai.tool.name'] === 'echo' && p.attributes['error.type'] === undefined,
    );
    const failed = server.find((p) => p.attributes['gen_ai.tool.name'] === 'fail');
    expect(echo?.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'mcp.mount': 'default' });
    expect(failed?.attributes['error.type']).toBe('tool_error');
    const clientPoints = pointsOf(all, 'mcp.client.operation.duration');
    const scriptedCalls = clientPoints.filter(
      (p) => p.attributes['mcp.server.name'] === 'scripted' && p.attributes['mcp.method.name'] === 'tools/call',
    );
    expect(scriptedCalls.reduce((sum, p) => sum + (p.value as { count: number }).count, 0)).toBe(2);
    expect(
      pointsOf(all, 'mcp.client.queue.wait.duration').find((p) => p.attributes['messaging.system'] === 'inline'),
    ).toBeDefined();
    expect(pointsOf(all, 'mcp.client.job.duration').length).toBeGreaterThan(0);
    expect(
      pointsOf(all, 'mcp.client.queue.depth')
        .map((p) => p.attributes['mcp.queue.state'])
        .sort(),
    ).toEqual(['active', 'waiting']);
    expect(pointsOf(all, 'mcp.server.session.active')[0].attributes['mcp.mount']).toBe('default');
    expect(
      pointsOf(all, 'mcp.server.stream.active')
        .map((p) => p.attributes['mcp.stream.kind'])
        .sort(),
    ).toEqual(['listen', 'session']);
    const batches = pointsOf(all, 'mcp.audit.commit.batch.size');
    expect(batches.reduce((sum, p) => sum + (p.value as { sum: number }).sum, 0)).toBeGreaterThanOrEqual(4);
    expect(pointsOf(all, 'mcp.audit.commit.duration').length).toBeGreaterThan(0);
    expect(
      pointsOf(all, 'mcp.client.stdio.spawns').find((p) => p.attributes['mcp.server.name'] === 'pooled')?.value,
    ).toBe(1);
    expect(
      pointsOf(all, 'mcp.client.stdio.pool.size').find((p) => p.attributes['mcp.server.name'] === 'pooled')?.value,
    ).toBe(1);
    // Every audit commit is a root span linked to the spans of its rows.
    const commit = telemetry.spans().find((s) => s.name === 'mcp.audit.commit' && s.links.length > 0);
    expect(commit?.parentSpanContext).toBeUndefined();
  });
});
