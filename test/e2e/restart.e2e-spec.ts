import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, send, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * No sticky sessions: app instances that share a database serve each other's sessions, also
 * after the instance that created a session is gone.
 */
describe('sessions survive across app instances on one database (no sticky sessions)', () => {
  let db: TestDatabase;
  const instances: RunningApp[] = [];
  const clients: Client[] = [];

  async function boot(): Promise<{ app: RunningApp; url: string }> {
    const app = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [FixtureTools],
    });
    instances.push(app);
    return { app, url: `${app.baseUrl}/mcp` };
  }

  function sdkClient(url: string, sessionId?: string) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      ...(sessionId ? { sessionId } : {}),
    });
    const client = new Client({ name: 'restart-e2e', version: '1.0.0' });
    clients.push(client);
    return { client, transport };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    for (const instance of instances) await instance.close().catch(() => undefined);
    await db?.drop();
  });

  it('a session opened on instance 1 is served by instance 2, keeps working after instance 1 closes, and its DELETE holds for a fresh instance 3', async () => {
    const first = await boot();
    const second = await boot();
    expect(second.url).not.toBe(first.url);

    // Initialize on instance 1 with the official SDK client.
    const one = sdkClient(first.url);
    await one.client.connect(one.transport);
    const sessionId = one.transport.sessionId as string;
    expect(sessionId).toBeTruthy();

    // The same session, continued on instance 2 while instance 1 still listens.
    const two = sdkClient(second.url, sessionId);
    await two.client.connect(two.transport);
    expect(two.transport.sessionId).toBe(sessionId);
    expect((await two.client.callTool({ name: 'echo', arguments: { text: 'served by 2' } })).content).toEqual([
      { type: 'text', text: 'served by 2' },
    ]);
    expect((await two.client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toEqual({
      principal: 'alice',
    });
    expect((await one.client.callTool({ name: 'echo', arguments: { text: 'back on 1' } })).content).toEqual([
      { type: 'text', text: 'back on 1' },
    ]);
    const interleaved = await post(second.url, callRequest('raw-2', 'echo', { text: 'raw on 2' }), {
      sessionId,
      headers: versionHeader(),
    });
    expect(interleaved.status).toBe(200);
    expect(interleaved.json.result.content).toEqual([{ type: 'text', text: 'raw on 2' }]);

    // Instance 1 goes away entirely; the session lives on through instance 2.
    await one.client.close();
    await first.app.close();
    const gone = await fetch(first.url, { method: 'POST' }).catch((e: unknown) => e);
    // fetch's TypeError comes from Node's realm, not Jest's: compare by name.
    expect(gone).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    expect((await two.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['echo', 'fail', 'whoami']);
    const failed = await two.client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);

    // Another session, kept open, proves instance 3 works when it refuses the terminated one.
    const control = await openSession(second.url);

    // DELETE on instance 2; a third, freshly booted instance must refuse the session.
    const deleted = await send(second.url, 'DELETE', { sessionId });
    expect(deleted.status).toBe(204);
    await second.app.close();
    const third = await boot();
    const refused = await post(third.url, callRequest('after-delete', 'echo', { text: 'x' }), {
      sessionId,
      headers: versionHeader(),
    });
    expect(refused.status).toBe(404);
    expect((await send(third.url, 'DELETE', { sessionId })).status).toBe(404);
    const alive = await post(third.url, callRequest('control', 'echo', { text: 'still here' }), {
      sessionId: control.sessionId,
      headers: versionHeader(),
    });
    expect(alive.status).toBe(200);
    expect(alive.json.result.content).toEqual([{ type: 'text', text: 'still here' }]);

    // One session row, terminated; every exchange any instance served points at it.
    const [session] = await db.dataSource.query(
      `SELECT id, terminated_at FROM mcp_inbound_sessions WHERE session_id = $1`,
      [sessionId],
    );
    expect(session.terminated_at).toBeInstanceOf(Date);
    const events: { method: string | null; status: number }[] = await db.dataSource.query(
      `SELECT method, status FROM mcp_events WHERE session_ref = $1 ORDER BY created_at, status`,
      [session.id],
    );
    const methods = events.map((e) => e.method);
    expect(methods.filter((m) => m === 'initialize')).toHaveLength(1);
    expect(methods.filter((m) => m === 'tools/call')).toHaveLength(5);
    expect(methods.filter((m) => m === 'tools/list')).toHaveLength(1);
    expect(events.filter((e) => e.status === 204)).toHaveLength(1);
  });

  it('a session outlives the restart of the only instance', async () => {
    const before = await boot();
    const { sessionId } = await openSession(before.url);
    await before.app.close();
    const after = await boot();
    const reply = await post(after.url, callRequest(1, 'whoami'), { sessionId, headers: versionHeader() });
    expect(reply.status).toBe(200);
    expect(reply.json.result.structuredContent).toEqual({ principal: 'alice' });
    const asBob = await post(after.url, callRequest(2, 'whoami'), {
      token: 'token-bob',
      sessionId,
      headers: versionHeader(),
    });
    expect(asBob.status).toBe(404);
  });
});
