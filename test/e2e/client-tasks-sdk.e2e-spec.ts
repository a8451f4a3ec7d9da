import { McpClientModule, McpClientService } from '../../src/mcp';
import { startSdkTaskServer, type SdkTaskServer } from '../fixtures/client/sdk-task-server';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Our client against the official SDK 1.x server with its task store (2025-11-25, Streamable HTTP): callTool as a task. */
describe('McpClientService calls a tool as a task on an official SDK 1.x server', () => {
  let db: TestDatabase;
  let sdk: SdkTaskServer;
  let client: RunningApp;
  let mcp: McpClientService;

  beforeAll(async () => {
    db = await createTestDatabase();
    sdk = await startSdkTaskServer();
    client = await startApp(db.url, {
      imports: [McpClientModule.forRoot({ servers: { sdk: { url: sdk.url, version: '2025-11-25' } } })],
    });
    mcp = client.app.get(McpClientService);
  });

  afterAll(async () => {
    await client?.close();
    await sdk?.close();
    await db?.drop();
  });

  const requests = (method: string) => sdk.posted.filter((body) => body.method === method);

  it('sends params.task, polls tasks/get until completed, fetches tasks/result, and the tool ran once', async () => {
    const call = mcp.callTool('sdk', 'slow', { tag: 'one' }, { task: { ttlMs: 30_000 } });
    await pollUntil('a tasks/get', () => (requests('tasks/get').length > 0 ? true : undefined));
    sdk.release('one');
    const result = await call;
    const [toolsCall] = requests('tools/call');
    expect(toolsCall.params).toEqual({ name: 'slow', arguments: { tag: 'one' }, task: { ttl: 30_000 } });
    const taskIds = new Set(
      [...requests('tasks/get'), ...requests('tasks/result')].map((body) => (body.params as { taskId: string }).taskId),
    );
    expect(taskIds.size).toBe(1);
    const [taskId] = taskIds;
    expect(result).toEqual({
      content: [{ type: 'text', text: 'slow one' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });
    expect(requests('tools/call')).toHaveLength(1);
    expect(requests('tasks/result')).toHaveLength(1);
    expect(sdk.runs.get('one')).toBe(1);
  });
});
