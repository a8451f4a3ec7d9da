import { join } from 'node:path';
import { McpClientModule, McpClientService } from '../../src/mcp';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** The stderr tail of a stdio server is kept in the outbound event row of the exchange. */
describe('stdio stderr in the outbound event row', () => {
  let db: TestDatabase;
  let app: RunningApp;
  let client: McpClientService;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: {
            noisy: {
              command: [process.execPath, join(__dirname, '..', 'fixtures', 'documented', 'stderr-server.js')],
              version: '2025-11-25',
            },
          },
        }),
      ],
    });
    client = app.app.get(McpClientService);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('a server that writes to stderr and then answers: the call succeeds and its event row carries the stderr lines', async () => {
    expect(await client.callTool('noisy', 'echo', { text: 'quiet answer' })).toEqual({
      content: [{ type: 'text', text: 'quiet answer' }],
    });
    const rows: Array<{ note: string | null; is_error: boolean; response: unknown }> = await db.dataSource.query(
      `SELECT note, is_error, response FROM mcp_events WHERE direction = 'outbound' AND server = 'noisy' AND method = 'tools/call'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      is_error: false,
      response: { result: { content: [{ type: 'text', text: 'quiet answer' }] } },
    });
    expect(rows[0].note).toContain(
      'stderr-fixture: loading configuration\nstderr-fixture: warning, cache directory missing\n',
    );
  });
});
