import {
  McpClientModule,
  McpClientService,
  McpModule,
  type McpCallLogMessage,
  type McpCallProgress,
} from '../../src/mcp';
import { McpCallAbortedError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { AbortableTools } from '../fixtures/progress/abortable-tools';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** onProgress, onLog and abort on the stateless revision (2026-07-28), against McpModule over HTTP. */
describe('per-call onProgress, onLog and AbortSignal on 2026-07-28', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let client: RunningApp;
  let mcp: McpClientService;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
        }),
      ],
      providers: [StatelessTools, AbortableTools],
    });
    client = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { own: { url: `${server.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2026-07-28' } },
        }),
      ],
    });
    mcp = client.app.get(McpClientService);
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await db?.drop();
  });

  it("delivers the progress and the log messages of the request's own response stream, in order", async () => {
    await mcp.setLogLevel('own', 'debug');
    const seen: Array<{ progress: McpCallProgress } | { log: McpCallLogMessage }> = [];
    const result = await mcp.callTool(
      'own',
      'work',
      {},
      { onProgress: (progress) => seen.push({ progress }), onLog: (log) => seen.push({ log }) },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'worked' }]);
    expect(seen).toEqual([
      { progress: { progress: 1, total: 2, message: 'half' } },
      { log: { level: 'info', logger: 'worker', data: 'working' } },
      { log: { level: 'debug', logger: 'worker', data: 'details' } },
      { progress: { progress: 2, total: 2, message: 'done' } },
    ]);
  });

  it('aborts a running call by closing its response stream: the tool sees its signal fire', async () => {
    const tools = server.app.get(AbortableTools);
    const controller = new AbortController();
    const call = mcp
      .callTool('own', 'wait_for_cancel', {}, { signal: controller.signal })
      .catch((error: unknown) => error);
    await pollUntil('the tool to start', () => (tools.events.length === 1 ? true : undefined));
    controller.abort();
    const error = await call;
    expect(error).toBeInstanceOf(McpCallAbortedError);
    expect(error).toMatchObject({ delivered: true, server: 'own', method: 'tools/call' });
    await pollUntil('the tool to see its cancellation', () => (tools.events.length === 2 ? true : undefined));
    expect(tools.events).toEqual([{ phase: 'started' }, { phase: 'aborted' }]);
  });
});
