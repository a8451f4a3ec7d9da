import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpProtocolError } from '../../src/mcp/errors';
import { McpEvent, McpOutboundSession } from '../../src/mcp/stores';
import { MCP_COLUMN_LENGTHS } from '../../src/mcp/persistence/mcp-columns.constants';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import {
  startScriptedHttpServer,
  status,
  type ScriptedHttpServer,
  type ScriptedReply,
} from '../fixtures/http/scripted-http-server';
import { envelope } from '../fixtures/stateless/stateless-wire';
import { openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** A request body written by hand, so it can hold what `JSON.stringify` never writes (a lone surrogate escape stays one anyway). */
const callText = (id: number, text: string, meta?: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":${text}}${meta ? `,"_meta":${meta}` : ''}}}`;

interface Target {
  name: string;
  options(): Promise<TypeOrmModuleOptions>;
  /** Makes the database refuse every `mcp_events` row whose method is `refuse/me` (a real refusal, not a mock). */
  refuseMethod(dataSource: DataSource): Promise<void>;
  close(): Promise<void>;
}

let db: TestDatabase | undefined;
const targets: Target[] = [
  {
    name: 'PostgreSQL',
    async options() {
      db = await createTestDatabase();
      return { type: 'postgres', url: db.url, entities: MCP_ENTITIES };
    },
    refuseMethod: (ds) =>
      ds.query(`ALTER TABLE mcp_events ADD CONSTRAINT refuse_me CHECK (method IS DISTINCT FROM 'refuse/me')`),
    close: async () => db?.drop(),
  },
  {
    name: 'SQLite',
    options: async () => ({ type: 'better-sqlite3', database: ':memory:', entities: MCP_ENTITIES, synchronize: true }),
    refuseMethod: (ds) =>
      ds.query(
        `CREATE TRIGGER refuse_me BEFORE INSERT ON mcp_events WHEN NEW.method = 'refuse/me' BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END`,
      ),
    close: async () => undefined,
  },
];

describe.each(targets)('audit rows that cannot be poisoned, on $name', (target) => {
  let app: INestApplication;
  let url: string;
  let events: () => Promise<McpEvent[]>;
  let scripted: ScriptedHttpServer;

  beforeAll(async () => {
    scripted = await startScriptedHttpServer();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot(await target.options()),
        McpModule.forRoot({ auth: fixtureAuth }),
        McpClientModule.forRoot({
          servers: { hostile: { url: scripted.url, version: '2025-11-25', retry: { retries: 0 } } },
        }),
      ],
      providers: [FixtureTools],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`;
    const dataSource = app.get(DataSource);
    events = () => dataSource.getRepository(McpEvent).find();
    await target.refuseMethod(dataSource);
  });

  afterAll(async () => {
    await app?.close();
    await scripted?.close();
    await target.close();
  });

  const rowOf = (rows: McpEvent[], id: number) =>
    rows.filter((row) => (row.request as { id?: unknown } | null)?.id === id);

  it('stores concurrent hostile requests with a note and answers every request without a 500', async () => {
    const { sessionId } = await openSession(url);
    const options = { sessionId, headers: versionHeader() };
    const method = `x/${'m'.repeat(298)}`;
    const replies = await Promise.all([
      ...[1, 2, 3, 4, 5].map((id) => post(url, callText(id, `"plain ${id}"`), options)),
      post(url, { jsonrpc: '2.0', id: 6, method, params: {} }, options),
      post(url, callText(7, '"meta"', '{"trace":"a\\u0000b"}'), options),
      post(url, callText(8, '"x\\ud800y"'), options),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    expect(replies[5].json).toMatchObject({ id: 6, error: { code: -32601 } });
    expect(replies[7].json).toMatchObject({ id: 8, result: { content: [{ type: 'text', text: 'x\ud800y' }] } });

    const rows = await events();
    for (const id of [1, 2, 3, 4, 5])
      expect(rowOf(rows, id)).toEqual([expect.objectContaining({ method: 'tools/call', status: 200, note: null })]);
    expect(rowOf(rows, 6)).toEqual([
      expect.objectContaining({
        method: method.slice(0, MCP_COLUMN_LENGTHS.method),
        errorCode: -32601,
        note: 'stored with changes: method cut from 300 to 255 characters',
      }),
    ]);
    const [meta] = rowOf(rows, 7);
    expect(meta.note).toBe('stored with changes: NUL characters or lone surrogates escaped in request');
    expect((meta.request as { params: { _meta: unknown } }).params._meta).toEqual({ trace: 'a\\u0000b' });
    const [surrogate] = rowOf(rows, 8);
    expect(surrogate.note).toBe(
      'stored with changes: NUL characters or lone surrogates escaped in request; NUL characters or lone surrogates escaped in response',
    );
    expect((surrogate.request as { params: { arguments: unknown } }).params.arguments).toEqual({ text: 'x\\ud800y' });
  });

  it('answers 503 with a JSON-RPC error for the one row the database refuses; the rows committed with it stand', async () => {
    const { sessionId } = await openSession(url);
    const options = { sessionId, headers: versionHeader() };
    const replies = await Promise.all([
      ...[11, 12, 13].map((id) => post(url, callText(id, `"neighbour ${id}"`), options)),
      post(url, { jsonrpc: '2.0', id: 14, method: 'refuse/me', params: {} }, options),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 503]);
    expect(replies[3].json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32603,
        message:
          'Service unavailable: the server could not record this request in its audit log (the database refused the row), so it is not answered',
      },
    });
    const rows = await events();
    for (const id of [11, 12, 13]) expect(rowOf(rows, id)).toHaveLength(1);
    expect(rows.filter((row) => row.method === 'refuse/me')).toEqual([]);
    const after = await post(url, callText(15, '"still fine"'), options);
    expect(after.json).toMatchObject({ id: 15, result: { content: [{ text: 'still fine' }] } });
  });

  it('refuses a 200,000-deep array with -32600 on both revisions, and serves the next call', async () => {
    const { sessionId } = await openSession(url);
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const message = 'Invalid Request: the message nests arrays and objects deeper than 128 levels';
    const session = await post(url, callText(21, `"x","deep":${deep}`), { sessionId, headers: versionHeader() });
    expect(session.status).toBe(400);
    expect(session.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
    const stateless = await post(
      url,
      `{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"echo","arguments":{"text":${deep}},"_meta":{}}}`,
      {
        headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo' },
      },
    );
    expect(stateless.status).toBe(400);
    expect(stateless.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message } });
    const next = await post(url, callText(23, '"next"'), { sessionId, headers: versionHeader() });
    expect(next.json).toMatchObject({ id: 23, result: { content: [{ text: 'next' }] } });
  });

  // The documented edge limit is 128 levels, as the number: the envelope, params and arguments are
  // three levels, so 125 arrays make a message 128 deep and 126 make it 129.
  it('lets a message of exactly 128 levels through the edge and refuses one of 129, on both revisions', async () => {
    const { sessionId } = await openSession(url);
    const nested = (arrays: number) => `${'['.repeat(arrays)}"x"${']'.repeat(arrays)}`;
    const refusal = {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: the message nests arrays and objects deeper than 128 levels' },
    };
    const onSession = (id: number, arrays: number) =>
      post(url, callText(id, nested(arrays)), { sessionId, headers: versionHeader() });
    const stateless = (id: number, arrays: number) =>
      post(
        url,
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":${nested(arrays)}},"_meta":${JSON.stringify(envelope())}}}`,
        {
          headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'echo' },
        },
      );
    // Past the edge, the tool's own validation answers: the text is not a string.
    const invalid = {
      content: [{ type: 'text', text: 'Invalid arguments for tool "echo": text: text must be a string' }],
      isError: true,
    };
    const statelessInvalid = {
      ...invalid,
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'durable-mcp', version: expect.any(String) } },
    };
    for (const [send, id, result] of [
      [onSession, 24, invalid],
      [stateless, 26, statelessInvalid],
    ] as const) {
      const under = await send(id, 125);
      expect({ status: under.status, json: under.json }).toEqual({ status: 200, json: { jsonrpc: '2.0', id, result } });
      const over = await send(id + 1, 126);
      expect({ status: over.status, json: over.json }).toEqual({ status: 400, json: refusal });
    }
  });

  it('round-trips NUL, lone surrogates, emoji, right-to-left marks and a 3 MiB string, each with its row', async () => {
    const { sessionId } = await openSession(url);
    const corpus = [
      'nul\u0000here',
      'lone high \ud800 and low \udc00',
      'emoji 😀👩‍👩‍👧 flags 🇫🇷',
      'rtl \u200fשלום\u200e مرحبا \u202e',
      'y'.repeat(3 * 1024 * 1024),
    ];
    let id = 30;
    for (const text of corpus) {
      id++;
      const reply = await post(url, callText(id, JSON.stringify(text)), { sessionId, headers: versionHeader() });
      expect(reply.status).toBe(200);
      expect(reply.json.result.content[0].text === text).toBe(true);
      const [row] = rowOf(await events(), id);
      expect(row).toMatchObject({ method: 'tools/call', status: 200 });
    }
  });

  it('records the exchanges with a hostile server: NUL, lone surrogates, a huge session id, deep nesting', async () => {
    const huge = 'S'.repeat(1000);
    const reply =
      (value: Record<string, unknown>, headers: Record<string, string> = {}): ScriptedReply =>
      (res, body) =>
        void res
          .writeHead(200, { 'Content-Type': 'application/json', ...headers })
          .end(JSON.stringify({ jsonrpc: '2.0', id: body?.id, result: value }));
    let nested: unknown = 'bottom';
    for (let i = 0; i < 100; i++) nested = [nested];
    scripted.reply(
      reply(
        {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'evil\u0000', version: '\ud800' },
        },
        { 'Mcp-Session-Id': huge },
      ),
      status(202),
      reply({ content: [{ type: 'text', text: 'nul\u0000 lone\udc00' }], structuredContent: { nested } }),
    );
    const client = app.get(McpClientService);
    const result = await client.callTool('hostile', 'anything', { q: 'x' });
    expect(result.content).toEqual([{ type: 'text', text: 'nul\u0000 lone\udc00' }]);

    const rows = (await events()).filter((row) => row.direction === 'outbound');
    const call = rows.find((row) => row.method === 'tools/call');
    expect(call?.note).toBe('stored with changes: NUL characters or lone surrogates escaped in response');
    expect((call?.response as { result: { content: unknown } }).result.content).toEqual([
      { type: 'text', text: 'nul\\u0000 lone\\udc00' },
    ]);
    const [session] = await app.get(DataSource).getRepository(McpOutboundSession).find();
    expect(session.remoteSessionId).toBe('S'.repeat(MCP_COLUMN_LENGTHS.remoteSessionId));
    expect(session.serverInfo).toEqual({ name: 'evil\\u0000', version: '\\ud800' });

    let tooDeep = '[]';
    for (let i = 0; i < 1000; i++) tooDeep = `[${tooDeep}]`;
    scripted.reply(
      (res, body) =>
        void res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(`{"jsonrpc":"2.0","id":${JSON.stringify(body?.id)},"result":{"content":[],"x":${tooDeep}}}`),
    );
    const error = await client.callTool('hostile', 'anything', { q: 'y' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpProtocolError);
    const failed = (await events()).filter((row) => row.direction === 'outbound' && row.method === 'tools/call');
    expect(failed).toHaveLength(2);
    expect(failed.find((row) => row.id !== call?.id)?.note).toContain('McpProtocolError');
  });
});
