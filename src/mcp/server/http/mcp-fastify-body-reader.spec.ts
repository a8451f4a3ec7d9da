import fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { MCP_RAW_BODY, discardLimitOf, type McpRequest } from './mcp-body-reader';
import { installFastifyBodyReader } from './mcp-fastify-body-reader';
import { nodeResponseOf } from './mcp-http-adapter';
import { narrowFastifyCatchAll } from './mcp-fastify-routes';

const LIMIT = 1024;

describe('MCP body reader on a real Fastify instance', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = fastify();
    const answer = (request: FastifyRequest, reply: FastifyReply) =>
      reply.send({
        raw: (request as unknown as McpRequest)[MCP_RAW_BODY] ?? null,
        parsed: request.body ?? null,
        contentType: request.headers['content-type'] ?? null,
        contentLength: request.headers['content-length'] ?? null,
      });
    app.post('/mcp', answer);
    app.post('/other', answer);
    installFastifyBodyReader(app, (path) => (path === '/mcp' ? { maxBytes: LIMIT, timeoutMs: 5_000 } : null));
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
  });

  it('hands an MCP body of any content type to the handler as text, unparsed, with the body headers back in place', async () => {
    for (const [contentType, payload] of [
      ['application/json', '{"jsonrpc":"2.0","id":1,"method":'],
      ['text/plain', 'plain words'],
      ['application/x-unknown', 'whatever'],
    ]) {
      const response = await app.inject({
        method: 'POST',
        url: '/mcp?x=1',
        headers: { 'content-type': contentType },
        payload,
      });
      expect({ status: response.statusCode, body: response.json() }).toEqual({
        status: 200,
        body: {
          raw: { ok: true, text: payload },
          parsed: null,
          contentType,
          contentLength: String(Buffer.byteLength(payload)),
        },
      });
    }
  });

  it('answers a body over the limit with the module 413, and closes the connection when it is beyond the discard bound', async () => {
    const error = {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: `Payload Too Large: the body exceeds ${LIMIT} bytes` },
    };
    const drained = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json' },
      payload: 'z'.repeat(LIMIT + 1),
    });
    expect({ status: drained.statusCode, body: drained.json() }).toEqual({ status: 413, body: error });
    const huge = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json' },
      payload: 'z'.repeat(discardLimitOf(LIMIT) + 1),
    });
    expect({ status: huge.statusCode, connection: huge.headers.connection, body: huge.json() }).toEqual({
      status: 413,
      connection: 'close',
      body: error,
    });
  });

  it('leaves other paths to Fastify: its JSON parser, its 400 and its 415', async () => {
    const parsed = await app.inject({
      method: 'POST',
      url: '/other',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":1}',
    });
    expect(parsed.json()).toMatchObject({ raw: null, parsed: { a: 1 }, contentType: 'application/json' });
    const broken = await app.inject({
      method: 'POST',
      url: '/other',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(broken.json()).toMatchObject({ statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
    const unknown = await app.inject({
      method: 'POST',
      url: '/other',
      headers: { 'content-type': 'application/x-unknown' },
      payload: 'x',
    });
    expect(unknown.json()).toMatchObject({ statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
  });
});

describe('narrowFastifyCatchAll', () => {
  it('lets a catch-all route of an MCP path sit beside its GET, POST and DELETE routes; other paths keep every method', async () => {
    const app = fastify();
    narrowFastifyCatchAll(app, (url) => url === '/mcp');
    for (const method of ['GET', 'POST', 'DELETE'] as const)
      app.route({ method, url: '/mcp', handler: async () => `served ${method}` });
    app.all('/mcp', async () => 'catch-all');
    app.all('/elsewhere', async () => 'elsewhere');
    await app.ready();
    try {
      const text = async (method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH' | 'OPTIONS', url = '/mcp') =>
        (await app.inject({ method, url })).body;
      expect(
        await Promise.all([text('GET'), text('POST'), text('DELETE'), text('PUT'), text('PATCH'), text('OPTIONS')]),
      ).toEqual(['served GET', 'served POST', 'served DELETE', 'catch-all', 'catch-all', 'catch-all']);
      expect(await Promise.all([text('GET', '/elsewhere'), text('PUT', '/elsewhere')])).toEqual([
        'elsewhere',
        'elsewhere',
      ]);
    } finally {
      await app.close();
    }
  });
});

describe('nodeResponseOf', () => {
  it('returns a Node response as is (Express)', () => {
    const response = new ServerResponse(new IncomingMessage(new Socket()));
    expect(nodeResponseOf(response)).toBe(response);
  });

  it('hijacks a Fastify reply, so what the handler writes to the Node response is all the client gets', async () => {
    const app = fastify();
    const errors: unknown[] = [];
    app.setErrorHandler((error, _request, reply) => {
      errors.push(error);
      return reply.send(error);
    });
    app.get('/stream', async (_request, reply) => {
      const res = nodeResponseOf(reply);
      // The handler resolves with nothing before anything is written, as the endpoint's do while
      // they wait on the database: Fastify would send an empty reply of its own.
      setImmediate(() => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write('data: one\n\n');
        setImmediate(() => res.end('data: two\n\n'));
      });
    });
    await app.ready();
    try {
      const response = await app.inject({ method: 'GET', url: '/stream' });
      expect({ status: response.statusCode, type: response.headers['content-type'], body: response.body }).toEqual({
        status: 200,
        type: 'text/event-stream',
        body: 'data: one\n\ndata: two\n\n',
      });
      expect(errors).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
