import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { replicaMcpModule } from '../fixtures/replica-module';
import { AbortProbe, SseTools } from '../fixtures/sse/sse-tools';
import { expectSessionNotificationAcrossReplicas } from '../fixtures/sse/cross-replica-stream';
import { startApp, type RunningApp } from '../support/http-app';
import { openSession, post, versionHeader } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys } from '../support/redis';

function isResponseBody(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  const message = JSON.parse(body) as Record<string, unknown>;
  return 'id' in message && !('method' in message);
}

/**
 * Two replicas on one database and one Redis, no sticky sessions: the client's answer to an
 * elicitation, a cancellation and a session notification each reach the replica that holds the
 * call or the stream, whichever replica they land on.
 */
describe('SSE across replicas (PostgreSQL + Redis pub/sub)', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const clients: Client[] = [];
  const channelPrefix = `sse-e2e-${randomBytes(6).toString('hex')}`;

  const boot = () =>
    startApp(db.url, {
      imports: [replicaMcpModule(channelPrefix, 'a-shared-secret-of-the-test-suite', [SseTools])],
      providers: [SseTools],
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`);
    await db?.drop();
  });

  it('an elicitation answer POSTed to replica B completes the call that runs on replica A', async () => {
    const routed: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${a.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      fetch: (input, init) => {
        const toB = init?.method === 'POST' && isResponseBody(init.body);
        routed.push(toB ? 'B' : 'A');
        return fetch(toB ? `${b.baseUrl}/mcp` : input, init);
      },
    });
    const client = new Client({ name: 'replicas-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    clients.push(client);
    await client.connect(transport);
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }));

    const result = await client.callTool({ name: 'ask_name', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'hello Grace' }]);
    expect(routed.filter((to) => to === 'B')).toHaveLength(1);
    // The event rows are written in batches, after the replies: wait until both replicas' rows are
    // there (the call's with its final status), then check exactly what they say.
    type Row = { method: string | null; kind: string; status: number | null };
    const rows = await pollUntil('the event rows of the call on A and of the answer on B', async () => {
      const found: Row[] = await db.dataSource.query(
        `SELECT e.method, e.kind, e.status FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref WHERE s.session_id = $1 AND e.method IS DISTINCT FROM 'initialize' AND e.method IS DISTINCT FROM 'notifications/initialized'`,
        [transport.sessionId],
      );
      return found.length >= 2 && found.every((row) => row.status !== null) ? found : undefined;
    });
    expect(rows.sort((x, y) => x.kind.localeCompare(y.kind))).toEqual([
      { method: 'tools/call', kind: 'request', status: 200 },
      { method: null, kind: 'response', status: 202 },
    ]);
  });

  it('notifications/cancelled POSTed to replica B aborts ctx.signal of the call on replica A', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
    const call = post(
      `${a.baseUrl}/mcp`,
      {
        jsonrpc: '2.0',
        id: 'long-1',
        method: 'tools/call',
        params: { name: 'wait_for_abort', arguments: { key: 'replica-cancel' } },
      },
      { sessionId, headers: versionHeader() },
    );
    await AbortProbe.whenStarted('replica-cancel');
    const cancel = await post(
      `${b.baseUrl}/mcp`,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long-1', reason: 'stop from B' } },
      { sessionId, headers: versionHeader() },
    );
    expect(cancel.status).toBe(202);
    await expect(AbortProbe.whenAborted('replica-cancel')).resolves.toBe('stop from B');
    expect((await call).status).toBe(200);
  });

  it('a session notification sent from replica B arrives on the GET stream held by replica A; B refuses a second stream', async () => {
    await expectSessionNotificationAcrossReplicas(a, b);
  });
});
