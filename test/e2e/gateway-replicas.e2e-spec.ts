import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { McpClientModule, McpGateway, McpGatewayModule } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { replicaMcpModule } from '../fixtures/replica-module';
import { startSdkSessionHttpServer, type SdkSessionHttpServer } from '../fixtures/sdk-session-http-server';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys } from '../support/redis';

jest.setTimeout(60_000);

/** Every McpServer the SDK fixture built (one per upstream session), so the `grow` tool can change all of them. */
const upstreamServers: McpServer[] = [];
let grown = false;

/** An upstream whose `grow` tool adds a tool at run time and says so on the call's own stream. */
function newUpstreamServer(): McpServer {
  const server = new McpServer({ name: 'gateway-replicas-upstream', version: '1.0.0' });
  server.registerTool('grow', { description: 'Adds the tool "grown"' }, async (extra) => {
    if (!grown) {
      grown = true;
      for (const each of upstreamServers)
        each.registerTool('grown', { description: 'Added at run time' }, async () => ({
          content: [{ type: 'text', text: 'grown answer' }],
        }));
    }
    await extra.sendNotification({ method: 'notifications/tools/list_changed' });
    return { content: [{ type: 'text', text: 'grew' }] };
  });
  upstreamServers.push(server);
  return server;
}

/**
 * The gateway on two replicas (one PostgreSQL database, one Redis) in front of an SDK 1.x HTTP
 * upstream: the replica whose call hears the upstream's tools/list_changed tells the other over
 * the mount's bus, and each reads the list again at once. refreshIntervalMs is ten minutes, so
 * only the bus can bring the new tool to the replica that did not run the call.
 */
describe('McpGatewayModule on two replicas: an upstream list change reaches both at once', () => {
  let db: TestDatabase;
  let upstream: SdkSessionHttpServer;
  let a: RunningApp;
  let b: RunningApp;
  const clients: Client[] = [];
  const channelPrefix = `gateway-e2e-${randomBytes(6).toString('hex')}`;

  const boot = () =>
    startApp(db.url, {
      imports: [
        replicaMcpModule(channelPrefix, 'a-shared-secret-of-the-gateway-replicas-suite'),
        McpClientModule.forRoot({ servers: { up: { url: upstream.url, version: '2025-11-25' } } }),
        McpGatewayModule.forRoot({
          upstreams: [{ server: 'up', prefix: 'up_', serve: ['tools'] }],
          refreshIntervalMs: 600_000,
        }),
      ],
    });

  /** An SDK client of `app` whose standalone GET stream is open there, counting tools/list_changed. */
  const connect = async (app: RunningApp): Promise<{ client: Client; changed: () => number }> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'gateway-replicas-e2e', version: '1.0.0' });
    clients.push(client);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(transport);
    const streams = app.app.get(McpStreamRegistry, { strict: false });
    await pollUntil('the client GET stream', () => (streams.has(transport.sessionId as string) ? true : undefined));
    return { client, changed: () => changed };
  };
  const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = await startSdkSessionHttpServer(newUpstreamServer);
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await upstream?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`);
    await db?.drop();
  });

  it('a tool the upstream adds during a call on A: the clients on A and on B get tools/list_changed, then list it', async () => {
    const onA = await connect(a);
    const onB = await connect(b);
    expect(await toolNames(onA.client)).toEqual(['up_grow']);
    expect(await toolNames(onB.client)).toEqual(['up_grow']);

    const result = await onA.client.callTool({ name: 'up_grow', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'grew' }]);

    for (const [replica, side] of [
      ['A', onA],
      ['B', onB],
    ] as const) {
      await pollUntil(`tools/list_changed on ${replica}`, () => (side.changed() > 0 ? true : undefined));
      await pollUntil(`up_grown listed on ${replica}`, async () =>
        (await toolNames(side.client)).includes('up_grown') ? true : undefined,
      );
      expect(await side.client.callTool({ name: 'up_grown', arguments: {} }).then((answer) => answer.content)).toEqual([
        { type: 'text', text: 'grown answer' },
      ]);
    }
    // B never ran an upstream call, and its next timed refresh is minutes away: the bus told it.
    expect(b.app.get(McpGateway).served('up').tools.sort()).toEqual(['up_grow', 'up_grown']);
  });
});
