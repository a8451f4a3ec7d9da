import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { serveMcpOverStdio } from '../../src/mcp';
import { getMcpStdioEndpointToken } from '../../src/mcp/mcp.constants';
import { NdjsonDecoder } from '../../src/mcp/protocol/ndjson';
import type { McpStdioEndpoint } from '../../src/mcp/server/stdio/mcp-stdio.endpoint';
import type { McpStdioConnection } from '../../src/mcp/server/stdio/stdio-connection';
import { pollUntil } from '../support/polling';

jest.setTimeout(60_000);

// Read by the fixture module when it is loaded: lines up to 4 KiB.
process.env.STDIO_MAX_BODY_BYTES = '4096';
const { StdioFixtureModule } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after its environment is set
  require('../fixtures/stdio-serve/stdio-serve-tools') as typeof import('../fixtures/stdio-serve/stdio-serve-tools');

type Frame = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions

/**
 * The stdio connection in this process, fed the lines a client would write and read as the
 * frames it writes: what `serveMcpOverStdio` wires to stdin and stdout (its child-process suite
 * is `stdio-serve`).
 */
describe('McpStdioConnection (in process, the fixture app on SQLite in memory)', () => {
  let app: INestApplicationContext;
  let endpoint: McpStdioEndpoint;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [StdioFixtureModule] }).compile();
    app = await moduleRef.init();
    endpoint = app.get<McpStdioEndpoint>(getMcpStdioEndpointToken(), { strict: false });
  });

  afterAll(async () => {
    await app?.close();
  });

  function open() {
    const frames: Frame[] = [];
    const connection: McpStdioConnection = endpoint.connect(
      { key: 'local', label: 'Local user', scopes: ['tools'], raw: null },
      (json) => frames.push(JSON.parse(json) as Frame),
    );
    const decoder = new NdjsonDecoder(
      { line: (line) => connection.receive(line), overflow: (chars) => connection.refuseOverflow(chars) },
      endpoint.maxLineChars,
    );
    const send = (message: unknown) =>
      decoder.push(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
    const next = (match: (frame: Frame) => boolean, what: string) => pollUntil(what, () => frames.find(match), 20_000);
    const answer = (id: string | number) => next((f) => f.id === id && ('result' in f || 'error' in f), `answer ${id}`);
    const initialize = async (capabilities: Record<string, unknown> = {}) => {
      send({
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'in-process', version: '1' } },
      });
      const init = await answer('init');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return init;
    };
    return { frames, connection, send, next, answer, initialize };
  }

  it('opens a session with initialize and serves tools/list and tools/call in it', async () => {
    const peer = open();
    expect((await peer.initialize()).result).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'stdio-fixture' },
    });
    expect(peer.connection.sessionId).toEqual(expect.any(String));
    peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(((await peer.answer(1)).result.tools as Frame[]).map((t) => t.name)).toEqual(
      expect.arrayContaining(['echo', 'count', 'ask', 'whoami']),
    );
    peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
    expect((await peer.answer(2)).result.content[0].text).toBe(`local/Local user on ${peer.connection.sessionId}`);
    await peer.connection.settled();
    await peer.connection.end();
    await peer.connection.end();
  });

  it('refuses a request before initialize, a second initialize, a malformed line and an over-long one, and keeps serving', async () => {
    const peer = open();
    peer.send({ jsonrpc: '2.0', id: 'early', method: 'tools/list' });
    expect((await peer.answer('early')).error).toMatchObject({
      code: -32000,
      message: expect.stringContaining('initialize'),
    });
    await peer.initialize();
    peer.send({
      jsonrpc: '2.0',
      id: 'again',
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    expect((await peer.answer('again')).error).toMatchObject({ code: -32600 });
    peer.send('{"jsonrpc": "2.0", "id": 5, "method": ');
    expect((await peer.next((f) => f.id === null && f.error?.code === -32700, 'parse error')).error.message).toContain(
      'Parse error',
    );
    peer.send({
      jsonrpc: '2.0',
      id: 6,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x'.repeat(5000) } },
    });
    expect((await peer.next((f) => f.id === null && f.error?.code === -32600, 'overflow')).error.message).toContain(
      'longer than 4096',
    );
    peer.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'after' } } });
    expect((await peer.answer(7)).result.content).toEqual([{ type: 'text', text: 'after' }]);
    // A response to nothing this connection asked and an unknown notification are ignored.
    peer.send({ jsonrpc: '2.0', id: 'nobody-asked', result: {} });
    peer.send({ jsonrpc: '2.0', method: 'notifications/unknown' });
    peer.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    expect((await peer.answer(8)).result).toEqual({});
    await peer.connection.settled();
    await peer.connection.end();
  });

  it('writes progress and log messages before the result, and carries an elicitation to the client and back', async () => {
    const peer = open();
    await peer.initialize({ elicitation: {} });
    peer.send({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info' } });
    await peer.answer(1);
    peer.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'count', arguments: {}, _meta: { progressToken: 9 } },
    });
    await peer.answer(2);
    const start = peer.frames.findIndex((f) => f.id === 1);
    expect(peer.frames.slice(start + 1).map((f) => f.method ?? `answer ${f.id}`)).toEqual([
      'notifications/progress',
      'notifications/message',
      'notifications/progress',
      'notifications/message',
      'notifications/progress',
      'notifications/message',
      'answer 2',
    ]);

    peer.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ask', arguments: {} } });
    const asked = await peer.next((f) => f.method === 'elicitation/create', 'the elicitation');
    peer.send({ jsonrpc: '2.0', id: asked.id, result: { action: 'accept', content: { name: 'Ada' } } });
    expect((await peer.answer(3)).result.content[0].text).toBe('hello Ada');
    await peer.connection.settled();
    await peer.connection.end();
  });

  it('aborts a call on notifications/cancelled and answers what it read before the end', async () => {
    const peer = open();
    await peer.initialize();
    peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'until_cancelled', arguments: {}, _meta: { progressToken: 'c' } },
    });
    await peer.next((f) => f.method === 'notifications/progress' && f.params.progressToken === 'c', 'the call started');
    peer.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1, reason: 'changed my mind' },
    });
    expect((await peer.answer(1)).result.content[0].text).toBe('stopped by the client');
    peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { ms: 50 } } });
    await peer.connection.settled();
    expect((await peer.answer(2)).result.content[0].text).toBe('waited 50 ms');
    await peer.connection.end();
    // After the end, the session is gone: a request meets "Session not found".
    peer.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect((await peer.answer(3)).error).toEqual(expect.objectContaining({ code: expect.any(Number) }));
  });

  describe('on the 2026-07-28 revision (the _meta envelope, no session)', () => {
    const envelope = (capabilities: Record<string, unknown> = {}, version = '2026-07-28') => ({
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    });
    const statelessRows = (method: string) =>
      app
        .get(DataSource)
        .query<Frame[]>(
          `SELECT status, error_code, protocol_version, session_ref, principal_key FROM mcp_events WHERE method = ? AND session_ref IS NULL ORDER BY created_at, id`,
          [method],
        );

    it('answers server/discover and tools/list without initialize, decorated as the revision wants', async () => {
      const peer = open();
      peer.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } });
      expect((await peer.answer(1)).result).toMatchObject({
        supportedVersions: expect.arrayContaining(['2026-07-28', '2025-11-25']),
        capabilities: { tools: { listChanged: true } },
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'stdio-fixture', version: '1.0.0' } },
      });
      peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope() } });
      const listed = (await peer.answer(2)).result;
      expect((listed.tools as Frame[]).map((t) => t.name)).toContain('echo');
      expect(listed).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number) });
      expect(peer.connection.sessionId).toBeNull();
      await peer.connection.settled();
      expect(await statelessRows('server/discover')).toContainEqual({
        status: 200,
        error_code: null,
        protocol_version: '2026-07-28',
        session_ref: null,
        principal_key: 'local',
      });
      await peer.connection.end();
    });

    it('refuses a malformed envelope, an unknown revision, a session-era method and an unknown log level with the revision’s codes, each audited', async () => {
      const peer = open();
      peer.send({ jsonrpc: '2.0', id: 1, method: 'server/discover' });
      expect((await peer.answer(1)).error).toMatchObject({ code: -32602, message: expect.stringContaining('_meta') });
      peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope({}, '1999-01-01') } });
      expect((await peer.answer(2)).error).toMatchObject({
        code: -32022,
        data: { requested: '1999-01-01', supported: expect.arrayContaining(['2026-07-28']) },
      });
      peer.send({ jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'info', _meta: envelope() } });
      expect((await peer.answer(3)).error).toMatchObject({ code: -32601 });
      peer.send({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/list',
        params: { _meta: { ...envelope(), 'io.modelcontextprotocol/logLevel': 'loud' } },
      });
      expect((await peer.answer(5)).error).toMatchObject({ code: -32602 });
      peer.send({
        jsonrpc: '2.0',
        id: 6,
        method: 'tools/call',
        params: { name: 'nope', arguments: {}, _meta: envelope() },
      });
      expect((await peer.answer(6)).error).toMatchObject({ code: -32602 });
      await peer.connection.settled();
      expect((await statelessRows('server/discover')).map((row) => [row.status, row.error_code])).toContainEqual([
        400, -32602,
      ]);
      await peer.connection.end();
    });

    it('asks for an elicitation with input_required, takes the answer on the retry, and sends progress frames', async () => {
      const peer = open();
      const meta = envelope({ elicitation: {} });
      peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: {}, _meta: meta } });
      const round = (await peer.answer(1)).result;
      expect(round).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
      const [key] = Object.keys(round.inputRequests as Frame);
      expect(round.inputRequests[key]).toMatchObject({ method: 'elicitation/create' });
      peer.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'ask',
          arguments: {},
          _meta: meta,
          inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
          requestState: round.requestState,
        },
      });
      expect((await peer.answer(2)).result).toMatchObject({
        content: [{ type: 'text', text: 'hello Ada' }],
        resultType: 'complete',
      });
      peer.send({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'count', arguments: {}, _meta: { ...meta, progressToken: 'p' } },
      });
      await peer.answer(3);
      expect(peer.frames.filter((f) => f.method === 'notifications/progress').map((f) => f.params.progress)).toEqual([
        1, 2, 3,
      ]);
      await peer.connection.settled();
      await peer.connection.end();
    });

    it('opens subscriptions/listen streams on the channel: tagged notifications, cancelled by the client, closed gracefully at the end', async () => {
      const peer = open();
      const listen = (id: string) =>
        peer.send({
          jsonrpc: '2.0',
          id,
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true, promptsListChanged: true }, _meta: envelope() },
        });
      const tagged = (id: string) =>
        peer.frames.filter((f) => f.params?._meta?.['io.modelcontextprotocol/subscriptionId'] === id);
      listen('a');
      listen('b');
      for (const id of ['a', 'b'])
        expect(
          await peer.next(
            (f) =>
              f.method === 'notifications/subscriptions/acknowledged' &&
              f.params._meta['io.modelcontextprotocol/subscriptionId'] === id,
            `acknowledgment ${id}`,
          ),
        ).toMatchObject({ params: { notifications: { toolsListChanged: true } } });
      expect(tagged('a')[0].params.notifications.promptsListChanged).toBeUndefined();
      // The same id twice on one connection could not be told apart: refused.
      listen('a');
      expect((await peer.answer('a')).error).toMatchObject({ code: -32600 });

      peer.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'add_tool', arguments: { name: 'listened_1' }, _meta: envelope() },
      });
      await peer.answer(1);
      for (const id of ['a', 'b'])
        await peer.next(
          (f) =>
            f.method === 'notifications/tools/list_changed' &&
            f.params._meta['io.modelcontextprotocol/subscriptionId'] === id,
          `list change on ${id}`,
        );
      peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a' } });
      await peer.connection.settled();
      peer.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'add_tool', arguments: { name: 'listened_2' }, _meta: envelope() },
      });
      await peer.answer(2);
      await pollUntil('the second list change on b', () =>
        tagged('b').filter((f) => f.method === 'notifications/tools/list_changed').length === 2 ? true : undefined,
      );
      expect(tagged('a').map((f) => f.method)).toEqual([
        'notifications/subscriptions/acknowledged',
        'notifications/tools/list_changed',
      ]);
      await peer.connection.end();
      // The server ends b: the graceful-closure response; a, cancelled by the client, gets none.
      expect(peer.frames.filter((f) => 'result' in f && (f.id === 'a' || f.id === 'b'))).toEqual([
        {
          jsonrpc: '2.0',
          id: 'b',
          result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'b' } },
        },
      ]);
      expect((await statelessRows('subscriptions/listen')).map((row) => row.status)).toEqual(
        expect.arrayContaining([200, 200]),
      );
      // A subscription asked for once the connection ended is not opened.
      listen('late');
      expect((await peer.answer('late')).error).toMatchObject({
        code: -32600,
        message: expect.stringContaining('ending'),
      });
    });

    it('aborts a request on notifications/cancelled and writes nothing more of it; the notification is audited', async () => {
      const peer = open();
      peer.send({
        jsonrpc: '2.0',
        id: 'c',
        method: 'tools/call',
        params: { name: 'until_cancelled', arguments: {}, _meta: { ...envelope(), progressToken: 'c' } },
      });
      await peer.next((f) => f.method === 'notifications/progress' && f.params.progressToken === 'c', 'started');
      peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } });
      // A notification of the revision that cancels nothing is audited and ignored.
      peer.send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'gone', _meta: envelope() },
      });
      await peer.connection.settled();
      expect(peer.frames.filter((f) => f.id === 'c')).toEqual([]);
      const rows = await app
        .get(DataSource)
        .query<Frame[]>(
          `SELECT status, json_extract(response, '$.result.content[0].text') AS text FROM mcp_events WHERE method = 'tools/call' AND json_extract(request, '$.id') = 'c'`,
        );
      expect(rows).toEqual([{ status: 200, text: 'stopped by the client' }]);
      expect(
        await app
          .get(DataSource)
          .query(
            `SELECT status FROM mcp_events WHERE method = 'notifications/cancelled' AND json_extract(request, '$.params.requestId') IN ('c', 'gone')`,
          ),
      ).toEqual([{ status: 202 }, { status: 202 }]);
      await peer.connection.end();
    });
  });

  it('serveMcpOverStdio with exitProcess: false boots the app, ends on close() and gives stdout back', async () => {
    const write = process.stdout.write;
    const server = await serveMcpOverStdio(StdioFixtureModule, {
      principal: { key: 'embedded' },
      exitProcess: false,
      logger: ['error'],
    });
    expect(process.stdout.write).not.toBe(write);
    await Promise.all([server.close(), server.close()]);
    await server.closed;
    expect(process.stdout.write).toBe(write);
  });

  it('serveMcpOverStdio refuses a module without the mount, and gives stdout back', async () => {
    const write = process.stdout.write;
    class BrokenModule {}
    await expect(
      serveMcpOverStdio(BrokenModule, { principal: { key: 'embedded' }, exitProcess: false, logger: false }),
    ).rejects.toThrow('serveMcpOverStdio: the module serves no MCP mount "default"');
    expect(process.stdout.write).toBe(write);
  });
});
