import { McpModule } from '../../src/mcp';
import { McpTransportError } from '../../src/mcp/errors';
import { type JsonRpcRequest } from '../../src/mcp/protocol';
import { HttpTransport } from '../../src/mcp/client/transports/http/http.transport';
import type { McpTransportContext } from '../../src/mcp/client/transports/mcp-transport.interface';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const context: McpTransportContext = { server: 'self', scopeKey: 'alice', timeoutMs: 10_000 };
let nextId = 1;
const callTool = (name: string, args: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('HttpTransport against McpModule (PostgreSQL)', () => {
  let db: TestDatabase;
  let app: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] });
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('calls echo and fail with a bearer token, in one session it opened itself', async () => {
    const transport = new HttpTransport({ url: `${app.baseUrl}/mcp`, bearerToken: 'token-alice' });
    const echoed = await transport.deliver(callTool('echo', { text: 'over http' }), { sessionId: null, context });
    expect(echoed.handshake).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'durable-mcp' } });
    expect(echoed.body).toMatchObject({ result: { content: [{ type: 'text', text: 'over http' }] } });
    expect(echoed.rawRequest).not.toContain('token-alice');
    expect(echoed.rawResponse).not.toContain('token-alice');

    const failed = await transport.deliver(callTool('fail', {}), {
      sessionId: echoed.sessionId,
      protocolVersion: echoed.handshake?.protocolVersion,
      context,
    });
    expect(failed.sessionId).toBe(echoed.sessionId);
    expect(failed.body).toMatchObject({
      result: { isError: true, content: [{ type: 'text', text: 'boom on purpose' }] },
    });

    const [row] = await db.dataSource.query(
      `SELECT principal_key, terminated_at FROM mcp_inbound_sessions WHERE session_id = $1`,
      [echoed.sessionId],
    );
    expect(row).toMatchObject({ principal_key: 'alice', terminated_at: null });

    await transport.closeSession(echoed.sessionId as string, context);
    const [closed] = await db.dataSource.query(`SELECT terminated_at FROM mcp_inbound_sessions WHERE session_id = $1`, [
      echoed.sessionId,
    ]);
    expect(closed.terminated_at).not.toBeNull();
  });

  it('re-opens a terminated session for tools/list but refuses to re-send tools/call', async () => {
    const transport = new HttpTransport({ url: `${app.baseUrl}/mcp`, bearerToken: 'token-alice' });
    const listed = await transport.deliver(
      { jsonrpc: '2.0', id: nextId++, method: 'tools/list' },
      { sessionId: null, context },
    );
    await transport.closeSession(listed.sessionId as string, context);

    const again = await transport.deliver(
      { jsonrpc: '2.0', id: nextId++, method: 'tools/list' },
      { sessionId: listed.sessionId, protocolVersion: '2025-11-25', context },
    );
    expect(again.sessionId).not.toBe(listed.sessionId);
    expect(again.handshake).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'durable-mcp' },
      capabilities: { tools: expect.any(Object) },
    });

    await transport.closeSession(again.sessionId as string, context);
    const error = await transport
      .deliver(callTool('echo', { text: 'no' }), { sessionId: again.sessionId, protocolVersion: '2025-11-25', context })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ status: 404, delivered: false });
  });

  it('gives McpTransportError with status 401 for a wrong token, without the token in the message', async () => {
    const transport = new HttpTransport({ url: `${app.baseUrl}/mcp`, bearerToken: 'token-mallory' });
    const error = await transport
      .deliver(callTool('echo', { text: 'x' }), { sessionId: null, context })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ status: 401, delivered: false });
    expect((error as Error).message).not.toContain('token-mallory');
  });
});
