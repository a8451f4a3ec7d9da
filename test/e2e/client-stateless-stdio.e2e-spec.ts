import { join } from 'node:path';
import type { McpClientOptions, McpClientService } from '../../src/mcp';
import { sdkServer } from '../fixtures/stdio/stdio-test-kit';
import { withClientApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(60_000);

const STATELESS = '2026-07-28';

/** A 2026-07-28 SDK 2.x stdio server that refuses the 2025 handshake: answers prove a stateless exchange. */
const statelessServer = [process.execPath, join(__dirname, '../fixtures/stateless-peers/stateless-stdio-server.js')];
const statelessEnv = { STATELESS_PEER_LEGACY: 'reject' };

type EventRow = {
  method: string;
  protocol_version: string | null;
  response: { result?: Record<string, unknown>; error?: { code: number } } | null;
};

/**
 * The client against official SDK stdio servers: a 2026-07-28 one (SDK 2.x), spawned per call
 * and pooled, and a 2025 one (SDK 1.x), with `version: 'auto'` and pinned.
 */
describe('McpClientService on both revisions over stdio', () => {
  let db: TestDatabase;
  let options: McpClientOptions;

  beforeAll(async () => {
    db = await createTestDatabase();
    options = {
      servers: {
        stateless: { command: statelessServer, env: statelessEnv },
        pooled: { command: statelessServer, env: statelessEnv, stateless: true, pool: { max: 1, idleMs: 30_000 } },
        legacy: { command: sdkServer() },
        legacyPinned: { command: sdkServer(), version: '2025-11-25' },
      },
      handlers: { elicitation: () => ({ action: 'accept', content: { name: 'Grace' } }) },
    };
  });

  afterAll(async () => {
    await db?.drop();
  });

  const withClient = <T>(use: (client: McpClientService) => Promise<T>): Promise<T> =>
    withClientApp(db.url, options, use);

  const events = (server: string): Promise<EventRow[]> =>
    db.dataSource.query(
      `SELECT method, protocol_version, response FROM mcp_events WHERE server = $1 ORDER BY created_at`,
      [server],
    );

  it('auto: probes a 2026-07-28 server, then sends each request without a handshake, input_required rounds included', async () => {
    await withClient(async (client) => {
      expect(await client.callTool('stateless', 'echo', { text: 'hi' })).toEqual({
        content: [{ type: 'text', text: 'hi' }],
      });
      expect(await client.callTool('stateless', 'ask', {})).toEqual({
        content: [{ type: 'text', text: 'Hello, Grace!' }],
      });
    });
    const rows = await events('stateless');
    expect(rows.map((r) => r.method)).toEqual(['server/discover', 'tools/call', 'tools/call', 'tools/call']);
    expect(rows.every((r) => r.protocol_version === STATELESS)).toBe(true);
    expect(rows[0].response?.result?.supportedVersions).toEqual([STATELESS]);
    expect(rows[2].response?.result?.resultType).toBe('input_required');
  });

  it('pooled: warm processes of a 2026-07-28 server serve calls without a handshake', async () => {
    await withClient(async (client) => {
      expect(await client.callTool('pooled', 'echo', { text: 'one' })).toEqual({
        content: [{ type: 'text', text: 'one' }],
      });
      expect(await client.callTool('pooled', 'echo', { text: 'two' })).toEqual({
        content: [{ type: 'text', text: 'two' }],
      });
    });
    const rows = await events('pooled');
    expect(rows.map((r) => r.method)).toEqual(['server/discover', 'tools/call', 'tools/call']);
    expect(rows.every((r) => r.protocol_version === STATELESS)).toBe(true);
  });

  it('auto: falls back to initialize for an SDK 1.x server; a second app instance reuses the persisted verdict; pinned never probes', async () => {
    await withClient(async (client) => {
      expect(await client.callTool('legacy', 'echo', { text: 'old' })).toEqual({
        content: [{ type: 'text', text: 'old' }],
      });
      expect(await client.callTool('legacyPinned', 'echo', { text: 'older' })).toEqual({
        content: [{ type: 'text', text: 'older' }],
      });
    });
    const first = await events('legacy');
    expect(first[0]).toMatchObject({ method: 'server/discover', response: { error: { code: -32601 } } });
    expect(first.slice(1).map((r) => r.protocol_version)).toEqual(first.slice(1).map(() => '2025-11-25'));
    const [row] = await db.dataSource.query(
      `SELECT protocol_version, endpoint FROM mcp_outbound_sessions WHERE server = 'legacy'`,
    );
    expect(row.protocol_version).toBe('2025-11-25');
    expect(row.endpoint).toContain('sdk-server.js');

    await withClient(async (client) => {
      expect(await client.callTool('legacy', 'echo', { text: 'again' })).toEqual({
        content: [{ type: 'text', text: 'again' }],
      });
    });
    const all = await events('legacy');
    expect(all.filter((r) => r.method === 'server/discover')).toHaveLength(1);
    expect(all.filter((r) => r.method === 'tools/call')).toHaveLength(2);
    expect((await events('legacyPinned')).map((r) => r.method)).not.toContain('server/discover');
  });
});
