import { randomBytes } from 'node:crypto';
import { McpClientModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import { McpInvalidToolError } from '../../src/mcp/errors';
import { killAllWorkers, startWorker, type WorkerProcess } from '../fixtures/client/worker-process';
import { startParamHeaderServer, type ParamHeaderServer } from '../fixtures/http/param-header-server';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(60_000);

const base64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/**
 * SEP-2243 on a 2026-07-28 server over Streamable HTTP: arguments annotated `x-mcp-header` travel
 * as `Mcp-Param-*` headers, and tools whose annotations break the rules are left out and refused.
 */
describe('McpClientService and x-mcp-header (2026-07-28 over HTTP)', () => {
  let db: TestDatabase;
  let server: ParamHeaderServer;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  beforeEach(async () => {
    server = await startParamHeaderServer();
  });
  afterEach(() => server.close());
  afterAll(() => db?.drop());

  async function withClient<T>(use: (client: McpClientService) => Promise<T>): Promise<T> {
    const options: McpClientOptions = { servers: { params: { url: server.url } } };
    const app: RunningApp = await startApp(db.url, { imports: [McpClientModule.forRoot(options)] });
    try {
      return await use(app.app.get(McpClientService));
    } finally {
      await app.close();
    }
  }

  it('mirrors the annotated arguments into Mcp-Param-* headers, reading the schema from tools/list when nothing was listed yet', async () => {
    await withClient(async (client) => {
      const args = { region: 'eu-west-1', priority: 7, dryRun: false, target: { zone: 'Zürich 1' }, query: 'SELECT 1' };
      expect(await client.callTool('params', 'route_query', args)).toEqual({
        content: [{ type: 'text', text: 'called route_query' }],
      });
      await client.callTool('params', 'route_query', {
        region: ' padded',
        priority: null,
        dryRun: true,
        query: 'SELECT 2',
      });
    });
    expect(server.methods).toEqual(['server/discover', 'tools/list', 'tools/call', 'tools/call']);
    expect(server.calls.map((call) => call.params)).toEqual([
      {
        'mcp-param-region': 'eu-west-1',
        'mcp-param-priority': '7',
        'mcp-param-dry-run': 'false',
        'mcp-param-zone': base64('Zürich 1'),
      },
      { 'mcp-param-region': base64(' padded'), 'mcp-param-dry-run': 'true' },
    ]);
    expect(server.calls[0].name).toBe('route_query');
  });

  it('leaves tools with invalid annotations out of listTools and listAllTools, and refuses to call them', async () => {
    await withClient(async (client) => {
      expect((await client.listTools('params')).map((tool) => tool.name)).toEqual(['route_query', 'plain']);
      expect((await client.listAllTools()).map((entry) => entry.tool.name)).toEqual(['route_query', 'plain']);
      const refused = await client.callTool('params', 'number_header', { score: 1.5 }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(McpInvalidToolError);
      expect(refused).toMatchObject({ server: 'params', tool: 'number_header', delivered: false });
      expect((refused as McpInvalidToolError).reason).toContain('type number');
      await expect(client.callTool('params', 'duplicate_header', { a: 'x', b: 'y' })).rejects.toBeInstanceOf(
        McpInvalidToolError,
      );
      await expect(client.callTool('params', 'plain', { text: 'hi' })).resolves.toEqual({
        content: [{ type: 'text', text: 'called plain' }],
      });
    });
    expect(server.calls.map((call) => call.tool)).toEqual(['plain']);
    expect(server.calls[0].params).toEqual({});
  });

  describe('over Bull, the call run by a worker process that listed nothing', () => {
    const queueName = `mcp-params-${randomBytes(4).toString('hex')}`;
    const prefix = `mcp-e2e-${randomBytes(4).toString('hex')}`;
    let worker: WorkerProcess | undefined;
    let caller: RunningApp | undefined;

    afterEach(async () => {
      await worker?.stop().catch(() => undefined);
      await killAllWorkers();
      await caller?.close().catch(() => undefined);
      // Every key of this queue's prefix: jobs, events and the at-most-once marks.
      await deleteRedisKeys(`${prefix}:*`);
    });

    it('has the worker read the schema itself and send the headers', async () => {
      const options: McpClientOptions = {
        servers: { params: { url: server.url } },
        redis: TEST_REDIS_URL,
        queue: { name: queueName, prefix },
      };
      worker = await startWorker({ databaseUrl: db.url, client: options });
      caller = await startApp(db.url, {
        imports: [McpClientModule.forRoot({ ...options, queue: { ...options.queue, worker: false } })],
      });
      const client = caller.app.get(McpClientService);
      expect(client.mode).toBe('bull');
      await client.callTool('params', 'route_query', { region: 'ap-south-1', priority: 1, query: 'SELECT 3' });
      expect(server.methods).toEqual(['server/discover', 'tools/list', 'tools/call']);
      expect(server.calls[0].params).toEqual({ 'mcp-param-region': 'ap-south-1', 'mcp-param-priority': '1' });
    });
  });
});
