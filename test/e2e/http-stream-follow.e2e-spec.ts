import { Injectable } from '@nestjs/common';
import { McpModule, McpTool, type McpToolContext } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { SseReader } from '../fixtures/sse/sse-reader';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, openSession, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const KEEP_ALIVE_MS = 200;

/** Gates the test opens by key: a gated tool reports one progress step, then waits for its gate. */
const gates = new Map<string, () => void>();
const gate = (key: string) => new Promise<void>((resolve) => gates.set(key, resolve));

async function until(check: () => Promise<boolean>, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

@Injectable()
class GatedTools {
  @McpTool({
    description: 'Reports one step, then waits until the test opens its gate',
    input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  })
  async gated({ key }: { key: string }, ctx: McpToolContext): Promise<string> {
    const opened = gate(key);
    await ctx.progress(1, 2, 'first step');
    await opened;
    return `released ${key}`;
  }
}

/**
 * A POST stream resumed with `Last-Event-ID` while its request still runs: the GET replays what
 * was sent, then follows the request until its response, or ends after two keep-alive intervals
 * without news.
 */
describe('resuming a POST stream whose request is still running', () => {
  let db: TestDatabase;
  let app: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [GatedTools],
          advanced: { streams: { keepAliveMs: KEEP_ALIVE_MS, retryMs: 50 } },
        }),
      ],
      providers: [GatedTools],
    });
  });

  afterAll(async () => {
    for (const release of gates.values()) release();
    await app?.close();
    await db?.drop();
  });

  const postHeaders = (sessionId: string) => ({
    Authorization: 'Bearer token-alice',
    'Content-Type': 'application/json',
    Accept: MCP_ACCEPT,
    'Mcp-Session-Id': sessionId,
    ...versionHeader(),
  });
  const getHeaders = (sessionId: string, lastEventId: string) => ({
    Authorization: 'Bearer token-alice',
    Accept: 'text/event-stream',
    'Mcp-Session-Id': sessionId,
    'Last-Event-ID': lastEventId,
    ...versionHeader(),
  });

  /** Starts a gated call on a POST stream, reads its priming event and first progress, then drops the connection. */
  async function startAndDrop(sessionId: string, key: string, id: number) {
    const post = new SseReader(
      await fetch(`${app.baseUrl}/mcp`, {
        method: 'POST',
        headers: postHeaders(sessionId),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'gated', arguments: { key }, _meta: { progressToken: key } },
        }),
      }),
    );
    const priming = await post.next();
    const progress = await post.next();
    await post.cancel();
    expect(priming?.data).toBe('');
    expect(JSON.parse(progress!.data)).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: key, progress: 1, total: 2 },
    });
    return { priming: priming!, progress: progress! };
  }

  it('replays what was sent, then delivers the response once the request finishes, and ends', async () => {
    const { sessionId } = await openSession(`${app.baseUrl}/mcp`);
    const { priming } = await startAndDrop(sessionId, 'follow', 11);
    const resumed = new SseReader(await fetch(`${app.baseUrl}/mcp`, { headers: getHeaders(sessionId, priming.id!) }));
    expect(await resumed.next()).toEqual({ id: priming.id, retry: 50, data: '' });
    const replayed = await resumed.next();
    expect(JSON.parse(replayed!.data)).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 'follow' },
    });
    gates.get('follow')!();
    const response = await resumed.next();
    expect(JSON.parse(response!.data)).toEqual({
      jsonrpc: '2.0',
      id: 11,
      result: { content: [{ type: 'text', text: 'released follow' }] },
    });
    expect(await resumed.next()).toBeNull();
  });

  it('ends a followed stream after two keep-alive intervals without news, without the response', async () => {
    const { sessionId } = await openSession(`${app.baseUrl}/mcp`);
    const { progress } = await startAndDrop(sessionId, 'stalled', 12);
    const resumed = new SseReader(await fetch(`${app.baseUrl}/mcp`, { headers: getHeaders(sessionId, progress.id!) }));
    expect(await resumed.next()).toEqual({ id: progress.id, retry: 50, data: '' });
    expect(await resumed.next()).toBeNull();
    gates.get('stalled')!();
  });

  it('replays the response and ends when the request finished while nobody listened', async () => {
    const { sessionId } = await openSession(`${app.baseUrl}/mcp`);
    const { progress } = await startAndDrop(sessionId, 'done-before', 13);
    gates.get('done-before')!();
    await until(async () => {
      const rows = await db.dataSource.query(
        `SELECT 1 FROM mcp_events WHERE method = 'tools/call' AND status = 200 AND request->>'id' = '13'`,
      );
      return rows.length === 1;
    }, 'the call is recorded as answered');
    const resumed = new SseReader(await fetch(`${app.baseUrl}/mcp`, { headers: getHeaders(sessionId, progress.id!) }));
    const events = await resumed.rest();
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({ id: progress.id, retry: 50, data: '' });
    expect(JSON.parse(events[1].data)).toEqual({
      jsonrpc: '2.0',
      id: 13,
      result: { content: [{ type: 'text', text: 'released done-before' }] },
    });
  });
});
