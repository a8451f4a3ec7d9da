import { McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { ParamHeaderTools } from '../fixtures/stateless/keyed-input-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import type { WireReply } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

function base64(text: string): string {
  return `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

/**
 * `x-mcp-header` on the wire (2026-07-28): a parameter present in a `tools/call` body needs its
 * `Mcp-Param-{Name}` header with the same value (Base64 sentinel decoded, integers compared as
 * numbers); anything else is HTTP 400 with -32020, and the refusal leaves an audit row.
 */
describe('Mcp-Param headers of stateless tools/call', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [ParamHeaderTools],
    });
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  function call(id: number, args: Record<string, unknown>, headers: Record<string, string | null>): Promise<WireReply> {
    return statelessPost(url, statelessRequest(id, 'tools/call', { name: 'route', arguments: args }), { headers });
  }

  function expectMismatch(reply: WireReply, id: number, text: string): void {
    expect({ status: reply.status, code: reply.json?.error?.code, id: reply.json?.id }).toEqual({
      status: 400,
      code: -32020,
      id,
    });
    expect(reply.json.error.message).toContain(text);
  }

  it('publishes x-mcp-header in the tool schema', async () => {
    const list = await statelessPost(url, statelessRequest(1, 'tools/list'));
    expect(list.json.result.tools[0].inputSchema.properties.region).toEqual({
      type: 'string',
      'x-mcp-header': 'Region',
    });
  });

  it('serves a call whose headers match its arguments (header names in any case)', async () => {
    const reply = await call(
      2,
      { region: 'us-west1', shard: 42, options: { dryRun: true }, query: 'q' },
      { 'Mcp-Param-Region': 'us-west1', 'mcp-param-shard': '42', 'MCP-PARAM-DRY-RUN': 'true' },
    );
    expect(reply.status).toBe(200);
    expect(reply.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'us-west1/42/true: q' }],
    });
  });

  it('does not expect the header of a parameter the call leaves out', async () => {
    const reply = await call(3, { region: 'eu', query: 'q' }, { 'Mcp-Param-Region': 'eu' });
    expect(reply.json.result.content).toEqual([{ type: 'text', text: 'eu/-/-: q' }]);
  });

  it('decodes a Base64 sentinel value before comparing it', async () => {
    const reply = await call(4, { region: 'Hello, 世界', query: 'q' }, { 'Mcp-Param-Region': base64('Hello, 世界') });
    expect(reply.status).toBe(200);
    expect(reply.json.result.content).toEqual([{ type: 'text', text: 'Hello, 世界/-/-: q' }]);
  });

  it('takes a value without the full sentinel as a literal', async () => {
    const reply = await call(
      5,
      { region: '=?base64?SGVsbG8=', query: 'q' },
      { 'Mcp-Param-Region': '=?base64?SGVsbG8=' },
    );
    expect(reply.status).toBe(200);
  });

  it('compares integers as numbers', async () => {
    const reply = await call(
      6,
      { region: 'eu', shard: 42, query: 'q' },
      { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Shard': '42.0' },
    );
    expect(reply.json.result.content).toEqual([{ type: 'text', text: 'eu/42/-: q' }]);
  });

  it('refuses a call without the header of a parameter it sets, and records the refusal', async () => {
    const reply = await call(7, { region: 'eu', query: 'q' }, {});
    expectMismatch(reply, 7, 'Mcp-Param-Region header is required');
    const rows = await db.dataSource.query(
      `SELECT method, status, error_code, session_ref FROM mcp_events WHERE request->>'id' = '7'`,
    );
    expect(rows).toEqual([{ method: 'tools/call', status: 400, error_code: -32020, session_ref: null }]);
  });

  it('refuses a header that does not match the body', async () => {
    expectMismatch(
      await call(8, { region: 'eu', query: 'q' }, { 'Mcp-Param-Region': 'us' }),
      8,
      `Mcp-Param-Region header value 'us' does not match body value 'eu'`,
    );
    expectMismatch(
      await call(9, { region: 'eu', shard: 1, query: 'q' }, { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Shard': '2' }),
      9,
      'Mcp-Param-Shard',
    );
    expectMismatch(
      await call(
        10,
        { region: 'eu', options: { dryRun: false }, query: 'q' },
        { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Dry-Run': 'False' },
      ),
      10,
      'Mcp-Param-Dry-Run',
    );
    expectMismatch(
      await call(11, { region: 'Hello', query: 'q' }, { 'Mcp-Param-Region': base64('Hallo') }),
      11,
      `'Hallo' does not match body value 'Hello'`,
    );
  });

  it('refuses malformed Base64 (unpadded, outside the alphabet) and a header for a parameter the call leaves out', async () => {
    expectMismatch(
      await call(12, { region: 'Hello', query: 'q' }, { 'Mcp-Param-Region': '=?base64?SGVsbG8?=' }),
      12,
      'malformed',
    );
    expectMismatch(
      await call(13, { region: 'Hello', query: 'q' }, { 'Mcp-Param-Region': '=?base64?SGVs!!!bG8=?=' }),
      13,
      'malformed',
    );
    expectMismatch(
      await call(14, { region: 'eu', query: 'q' }, { 'Mcp-Param-Region': 'eu', 'Mcp-Param-Shard': '3' }),
      14,
      'arguments/shard is not set',
    );
  });
});
