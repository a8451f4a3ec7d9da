import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { McpDrainService, McpModule, McpTool, type McpToolContext } from '../../src/mcp';
import { SHUTDOWN_AUDIT_NOTE } from '../../src/mcp/server/shutdown/shutdown-answers';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import {
  callRequest,
  initializeRequest,
  openSession,
  post,
  send,
  versionHeader,
  type WireReply,
} from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { McpHealthModule } from '../../src/mcp/health';

jest.setTimeout(60_000);

/**
 * The drain deadline of the app under test. The call that finishes does so after the checks made
 * while the drain runs (health, four refusals, a notification); on a saturated machine those took
 * more than a second, so the deadline leaves them several.
 */
const DRAIN_TIMEOUT_MS = 4000;

class TagInput {
  @IsString()
  tag: string;
}

/** A gate the test opens: resolves every waiter at once. */
class Gate {
  private open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
  release(): void {
    this.open();
  }
}

/** Tools that run until the test (or the drain) stops them; each records that it started and whether its signal fired. */
@Injectable()
class DrainTools {
  readonly started = new Set<string>();
  readonly aborted = new Map<string, string>();
  gate = new Gate();
  /** Never opened before the drain forced the answer: a tool that ignores its signal. */
  stubborn = new Gate();

  private watch(tag: string, ctx: McpToolContext): void {
    this.started.add(tag);
    ctx.signal.addEventListener(
      'abort',
      () => this.aborted.set(tag, String((ctx.signal.reason as Error)?.message ?? ctx.signal.reason)),
      { once: true },
    );
  }

  @McpTool({ description: 'Returns once the test opens its gate', input: TagInput })
  async until_gate({ tag }: TagInput, ctx: McpToolContext): Promise<string> {
    this.watch(tag, ctx);
    await this.gate.opened;
    return `finished ${tag}`;
  }

  @McpTool({ description: 'Returns when its signal fires', input: TagInput })
  async until_aborted({ tag }: TagInput, ctx: McpToolContext): Promise<string> {
    this.watch(tag, ctx);
    await new Promise((resolve) =>
      ctx.signal.aborted ? resolve(undefined) : ctx.signal.addEventListener('abort', resolve, { once: true }),
    );
    return `stopped ${tag}`;
  }

  @McpTool({ description: 'Returns when its signal fires; may run as a task', input: TagInput, task: 'optional' })
  async task_until_aborted({ tag }: TagInput, ctx: McpToolContext): Promise<string> {
    return this.until_aborted({ tag }, ctx);
  }

  @McpTool({ description: 'Ignores its signal', input: TagInput })
  async ignores_abort({ tag }: TagInput, ctx: McpToolContext): Promise<string> {
    this.watch(tag, ctx);
    await this.stubborn.opened;
    return `late ${tag}`;
  }
}

function rpcError(reply: WireReply): { code: number; message: string } | undefined {
  return reply.json?.error;
}

/**
 * The drain of one app, in process: `app.close()` (what SIGTERM runs with shutdown hooks) turns
 * readiness down and refuses new sessions and calls with 503 + Retry-After on both revisions,
 * lets the call that finishes in time answer normally, aborts the calls still running at
 * `shutdown.drainTimeoutMs` (their signal fires), answers a call that ignores its signal with a
 * JSON-RPC error, and every answered call keeps its audit row.
 */
describe.each(HTTP_ADAPTERS)('graceful shutdown: draining the calls in flight (%s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp | undefined;
  let closing: Promise<void> | undefined;
  let tools: DrainTools;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            providers: [DrainTools],
            advanced: { shutdown: { drainTimeoutMs: DRAIN_TIMEOUT_MS, retryAfterMs: 2500 } },
          }),
          McpHealthModule.forRoot(),
        ],
        providers: [DrainTools],
      },
      adapter,
    );
    tools = server.app.get(DrainTools);
  });

  afterAll(async () => {
    tools?.gate.release();
    tools?.stubborn.release();
    if (closing) await closing.catch(() => undefined);
    else await server?.close();
    await db?.drop();
  });

  it('refuses new work with 503, finishes or aborts what runs, answers and audits every call', async () => {
    const app = server!;
    const url = `${app.baseUrl}/mcp`;
    const { sessionId } = await openSession(url);
    expect((await fetch(`${app.baseUrl}/health/ready`)).status).toBe(200);

    const onSession = (id: string, tool: string) =>
      post(url, callRequest(id, tool, { tag: id }), { sessionId, headers: versionHeader() });
    const inFlight = {
      finishes: onSession('finishes', 'until_gate'),
      aborted: onSession('aborted', 'until_aborted'),
      stateless: statelessPost(
        url,
        statelessRequest('stateless', 'tools/call', { name: 'until_aborted', arguments: { tag: 'stateless' } }),
      ),
      stubborn: onSession('stubborn', 'ignores_abort'),
    };
    const task = await post(
      url,
      {
        ...callRequest('as-task', 'task_until_aborted', { tag: 'task' }),
        params: { name: 'task_until_aborted', arguments: { tag: 'task' }, task: { ttl: 60_000 } },
      },
      { sessionId, headers: versionHeader() },
    );
    expect(task.json.result.task).toMatchObject({ status: 'working' });
    await pollUntil('the four calls and the task running', () => (tools.started.size === 5 ? true : undefined));

    closing = app.close();
    const drain = app.app.get(McpDrainService);
    await pollUntil('the drain started', () => (drain.draining ? true : undefined));

    // Readiness is down, liveness is not.
    const ready = await fetch(`${app.baseUrl}/health/ready`);
    expect(ready.status).toBe(503);
    const report = (await ready.json()) as {
      error: Record<string, { status: string; draining?: boolean; inFlight?: number }>;
    };
    expect(report.error.shutdown).toMatchObject({ status: 'down', draining: true, inFlight: 5 });
    expect((await fetch(`${app.baseUrl}/health/live`)).status).toBe(200);

    // New calls, new sessions, new streams: 503 with Retry-After and a JSON-RPC body, on both revisions.
    const refusals = {
      call: await onSession('late-call', 'until_gate'),
      initialize: await post(url, initializeRequest('late-init')),
      stateless: await statelessPost(url, statelessRequest('late-stateless', 'tools/list')),
      stream: await send(url, 'GET', { sessionId, headers: { ...versionHeader(), Accept: 'text/event-stream' } }),
    };
    for (const [name, reply] of Object.entries(refusals)) {
      expect({ name, status: reply.status, retryAfter: reply.headers.get('retry-after') }).toEqual({
        name,
        status: 503,
        retryAfter: '3',
      });
      expect(reply.json).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, message: expect.stringContaining('shutting down') },
      });
    }
    expect(refusals.call.json.id).toBe('late-call');
    expect(refusals.initialize.json.id).toBe('late-init');
    expect(tools.started.has('late-call')).toBe(false);
    // A notification still reaches the session (a cancellation or a client's answer may be what a call in flight waits for).
    expect(
      (
        await post(
          url,
          { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
          { sessionId, headers: versionHeader() },
        )
      ).status,
    ).toBe(202);

    // The call that can finish before the deadline does, normally.
    tools.gate.release();
    const finishes = await inFlight.finishes;
    expect(finishes.status).toBe(200);
    expect(finishes.json.result.content).toEqual([{ type: 'text', text: 'finished finishes' }]);
    expect(tools.aborted.has('finishes')).toBe(false);

    // Past the deadline: the signal fires, the tool returns, the answer goes out.
    const aborted = await inFlight.aborted;
    expect(aborted.status).toBe(200);
    expect(aborted.json.result.content).toEqual([{ type: 'text', text: 'stopped aborted' }]);
    expect(tools.aborted.get('aborted')).toContain('drain deadline');
    const stateless = await inFlight.stateless;
    expect(stateless.status).toBe(200);
    expect(stateless.json.result.content).toEqual([{ type: 'text', text: 'stopped stateless' }]);
    // A tool that ignores its signal is answered for: a JSON-RPC error, not a hanging connection.
    const stubborn = await inFlight.stubborn;
    expect(stubborn.status).toBe(200);
    expect(rpcError(stubborn)).toMatchObject({ code: -32603, message: expect.stringContaining('shut down') });
    expect(tools.aborted.has('stubborn')).toBe(true);

    await closing;
    // The task held the drain like a call, was aborted at the deadline and ended interrupted.
    expect(tools.aborted.get('task')).toContain('drain deadline');
    expect(await db.dataSource.query(`SELECT status, status_message FROM mcp_tasks`)).toEqual([
      { status: 'failed', status_message: 'Interrupted: the worker shut down' },
    ]);
    const rows: { id: string; note: string | null; status: number }[] = await db.dataSource.query(
      `SELECT request->>'id' AS id, note, status FROM mcp_events WHERE method = 'tools/call' AND kind = 'request' AND request->>'id' <> 'as-task' ORDER BY request->>'id'`,
    );
    expect(rows).toEqual([
      { id: 'aborted', note: SHUTDOWN_AUDIT_NOTE, status: 200 },
      { id: 'finishes', note: null, status: 200 },
      { id: 'stateless', note: SHUTDOWN_AUDIT_NOTE, status: 200 },
      { id: 'stubborn', note: SHUTDOWN_AUDIT_NOTE, status: 200 },
    ]);
  });
});
