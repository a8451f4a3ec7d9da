import { McpClientModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import { startSdkStandaloneServer, type SdkStandaloneServer } from '../fixtures/http/sdk-standalone-server';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Polls `check` until it holds or the deadline passes. */
async function until(check: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A 2025 session with an SDK 1.x server that sends its requests on the standalone GET stream
 * (`server.server.elicitInput` without `relatedRequestId`): the client listens there while a call
 * is in flight, answers with the registered handlers, fills in elicitation defaults (SEP-1034),
 * and closes the stream when the call ends.
 */
describe('McpClientService and the standalone GET stream of a 2025 session', () => {
  let db: TestDatabase;
  let server: SdkStandaloneServer;
  const elicited: Record<string, unknown>[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startSdkStandaloneServer();
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /**
   * Runs `use` with a client app whose server entry is named `name`: each test passes its own,
   * so it opens its own remote session (sessions are stored per server name).
   */
  async function withClient<T>(name: string, use: (client: McpClientService) => Promise<T>): Promise<T> {
    const options: McpClientOptions = {
      servers: { [name]: { url: server.url, version: '2025-11-25' } },
      handlers: {
        // A user who accepts the form without touching it.
        elicitation: (params) => {
          elicited.push(params);
          return { action: 'accept', content: {} };
        },
        roots: () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }),
      },
    };
    const app: RunningApp = await startApp(db.url, { imports: [McpClientModule.forRoot(options)] });
    try {
      return await use(app.app.get(McpClientService));
    } finally {
      await app.close();
    }
  }

  it('answers an elicitation sent on the standalone stream, with the schema defaults filled in, and closes the stream after the call', async () => {
    const openedBefore = server.streamsOpened();
    const result = await withClient('sdk-profile', async (client) => {
      const answer = await client.callTool('sdk-profile', 'profile', {});
      await until(() => server.streamsOpen() === 0, 'the standalone stream to close after the call');
      return answer;
    });
    expect(elicited).toHaveLength(1);
    expect(elicited[0]).toMatchObject({ message: 'Your profile?' });
    const filled = { name: 'John Doe', age: 30, status: 'active', verified: true };
    expect(server.answers).toEqual([{ action: 'accept', content: filled }]);
    expect(result).toEqual({ content: [{ type: 'text', text: JSON.stringify(filled) }] });
    // A stream is open while a request of the session is in flight: the call, whose own
    // handshake opened the session.
    expect(server.streamsOpened() - openedBefore).toBe(1);
  });

  it('answers other server requests found there (roots/list) with the same handlers', async () => {
    const openedBefore = server.streamsOpened();
    const result = await withClient('sdk-roots', (client) => client.callTool('sdk-roots', 'roots', {}));
    expect(result).toEqual({ content: [{ type: 'text', text: 'file:///work' }] });
    await until(() => server.streamsOpen() === 0, 'the standalone stream to close after the call');
    expect(server.streamsOpened() - openedBefore).toBe(1);
  });
});
