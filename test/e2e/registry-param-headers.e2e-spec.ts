import { Injectable, type OnModuleInit } from '@nestjs/common';
import { McpModule, McpRegistry } from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { ParamHeaderTools, ROUTE_INPUT_SCHEMA } from '../fixtures/stateless/keyed-input-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { openSession, post, versionHeader, type WireReply } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Adds at boot, through the registry, a tool with the same `x-mcp-header` schema as the decorated `route`. */
@Injectable()
class RuntimeRoute implements OnModuleInit {
  constructor(private readonly registry: McpRegistry) {}

  async onModuleInit(): Promise<void> {
    await this.registry.addTool(
      { name: 'route_runtime', description: 'Routes a query (added at run time)', input: ROUTE_INPUT_SCHEMA },
      ({ region, query }: { region: string; query: string }) => `${region}: ${query}`,
    );
  }
}

const BAD_HEADER_SCHEMA = { type: 'object', properties: { ratio: { type: 'number', 'x-mcp-header': 'Ratio' } } };

/**
 * `x-mcp-header` on a tool `McpRegistry.addTool` adds: validated like a decorated tool's (an
 * annotation a client would reject refuses the tool), published in `tools/list` on both
 * revisions, and enforced on stateless `tools/call` like the decorated tool's.
 */
describe('x-mcp-header on runtime tools', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  let registry: McpRegistry;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [ParamHeaderTools, RuntimeRoute],
    });
    url = `${server.baseUrl}/mcp`;
    registry = server.app.get(McpRegistry);
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /** The tools of `tools/list` by name, on a 2025-11-25 session and statelessly (2026-07-28). */
  async function listBothRevisions(): Promise<Record<string, Record<string, unknown>>[]> {
    const { sessionId } = await openSession(url);
    const replies: WireReply[] = [
      await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { sessionId, headers: versionHeader() }),
      await statelessPost(url, statelessRequest(2, 'tools/list')),
    ];
    return replies.map((reply) => {
      expect(reply.status).toBe(200);
      const tools = reply.json.result.tools as Record<string, unknown>[];
      return Object.fromEntries(tools.map((tool) => [tool.name as string, tool]));
    });
  }

  it('publishes the annotations of a runtime tool as those of the decorated one, on both revisions', async () => {
    for (const tools of await listBothRevisions()) {
      expect(tools.route_runtime.inputSchema).toEqual(tools.route.inputSchema);
      expect((tools.route_runtime.inputSchema as typeof ROUTE_INPUT_SCHEMA).properties.region).toEqual({
        type: 'string',
        'x-mcp-header': 'Region',
      });
    }
  });

  it('serves a stateless call of the runtime tool whose header matches, and refuses one without it', async () => {
    const call = (id: number) =>
      statelessRequest(id, 'tools/call', { name: 'route_runtime', arguments: { region: 'eu', query: 'q' } });
    const served = await statelessPost(url, call(3), { headers: { 'Mcp-Param-Region': 'eu' } });
    expect(served.status).toBe(200);
    expect(served.json.result.content).toEqual([{ type: 'text', text: 'eu: q' }]);

    const refused = await statelessPost(url, call(4));
    expect({ status: refused.status, code: refused.json?.error?.code }).toEqual({ status: 400, code: -32020 });
    expect(refused.json.error.message).toContain('Mcp-Param-Region header is required');
  });

  it('refuses a runtime tool with an annotation a client would reject, naming it as the boot check does', async () => {
    const added = registry.addTool({ name: 'scale', description: 'bad', input: BAD_HEADER_SCHEMA }, () => 'x');
    await expect(added).rejects.toThrow(McpConfigurationError);
    await expect(added).rejects.toThrow(
      '@McpTool "scale" on McpRegistry#addTool(scale): invalid x-mcp-header in its input schema: ' +
        'the property at /properties/ratio has type "number"; x-mcp-header needs "string", "integer" or "boolean"',
    );
    for (const tools of await listBothRevisions())
      expect(Object.keys(tools).sort()).toEqual(['route', 'route_runtime']);
  });
});
