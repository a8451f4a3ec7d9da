import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Injectable, UseGuards, type ExecutionContext } from '@nestjs/common';
import { Throttle, ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { getMcpContext, McpModule, McpTool, type McpAuthResult, type McpExecutionInfo } from '../../src/mcp';
import { pollUntil } from '../support/polling';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * `@nestjs/throttler` as a tool guard: the tracker is the MCP principal (not the IP), lists do not
 * count, and no HTTP response headers are set (the MCP answer has none of its own).
 */
@Injectable()
class McpThrottlerGuard extends ThrottlerGuard {
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    const mcp = getMcpContext(context);
    return mcp !== null && mcp.phase !== 'call';
  }

  protected override getRequestResponse(context: ExecutionContext) {
    const mcp = getMcpContext(context);
    return mcp
      ? { req: mcp as unknown as Record<string, unknown>, res: {} as Record<string, unknown> }
      : super.getRequestResponse(context);
  }

  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    const principal = (req as unknown as McpExecutionInfo).principal;
    return principal ? `principal:${principal.key}` : super.getTracker(req);
  }
}

@Injectable()
class SearchTools {
  @McpTool({ description: 'Searches, at most twice a minute per caller' })
  @UseGuards(McpThrottlerGuard)
  @Throttle({ default: { limit: 2, ttl: 60_000 } })
  search() {
    return 'results';
  }
}

const PEOPLE: Record<string, McpAuthResult> = { 'token-ada': { key: 'ada' }, 'token-bob': { key: 'bob' } };

describe('@nestjs/throttler as a tool guard keyed by principal (real app, SDK client)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  const clients: Client[] = [];

  async function connect(token: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'throttler-e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        ThrottlerModule.forRoot([{ ttl: 60_000, limit: 100 }]),
        McpModule.forRoot({ auth: (token) => PEOPLE[token] ?? null }),
      ],
      providers: [SearchTools, McpThrottlerGuard],
    });
  });

  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.close();
    await db?.drop();
  });

  it('lets each principal call the tool twice, answers the third call with a tool error, and keeps listing it', async () => {
    const ada = await connect('token-ada');
    const bob = await connect('token-bob');
    for (let i = 0; i < 4; i++) expect((await ada.listTools()).tools.map((tool) => tool.name)).toEqual(['search']);
    expect(await ada.callTool({ name: 'search', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'results' }],
    });
    expect(await ada.callTool({ name: 'search', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'results' }],
    });
    const third = await ada.callTool({ name: 'search', arguments: {} });
    expect(third).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'ThrottlerException: Too Many Requests' }],
    });
    // Another principal has its own budget, even from the same address.
    expect(await bob.callTool({ name: 'search', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'results' }],
    });
    expect((await ada.listTools()).tools.map((tool) => tool.name)).toEqual(['search']);

    const rows = await pollUntil('the throttled call is audited', async () => {
      const found: Array<{ note: string; is_error: boolean }> = await db.dataSource.query(
        `SELECT note, is_error FROM mcp_events WHERE method = 'tools/call' AND principal_key = 'ada' AND note IS NOT NULL`,
      );
      return found.length ? found : undefined;
    });
    expect(rows).toEqual([
      {
        note: expect.stringMatching(/^Refused tool "search" by McpThrottlerGuard: .*Too Many Requests/),
        is_error: true,
      },
    ]);
  });
});
