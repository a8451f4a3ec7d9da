import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyServerOptions } from 'fastify';
import { connect, type Socket } from 'node:net';
import { MCP_ENTITIES, McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { HTTP_ADAPTERS, createHttpApp, type HttpAdapterName } from '../support/http-app';
import { MCP_ACCEPT, callRequest, initializeRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Every line the app logs, at every level, so a test can look for a token in them. */
class CapturingLogger implements LoggerService {
  readonly lines: string[] = [];
  private keep(...parts: unknown[]): void {
    this.lines.push(
      parts.map((part) => (typeof part === 'string' ? part : (JSON.stringify(part) ?? String(part)))).join(' '),
    );
  }
  log(...parts: unknown[]): void {
    this.keep(...parts);
  }
  error(...parts: unknown[]): void {
    this.keep(...parts);
  }
  warn(...parts: unknown[]): void {
    this.keep(...parts);
  }
  debug(...parts: unknown[]): void {
    this.keep(...parts);
  }
  verbose(...parts: unknown[]): void {
    this.keep(...parts);
  }
}

interface Booted {
  app: INestApplication;
  origin: string;
  port: number;
  logger: CapturingLogger;
}

/**
 * The database every app of this file writes to: one for the file, created before the first
 * describe and dropped after the last (no test counts rows but the token check, which must find
 * none in any of them).
 */
let db: TestDatabase;

/**
 * Every app booted so far, closed together after the last test: closing an app waits out its
 * quiet period (`shutdown.quietPeriodMs`, 500 ms) for the idle keep-alive connections fetch left
 * open, and one after another each describe would wait it out on its own.
 */
const running: Booted[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(running.splice(0).map((booted) => booted.app.close()));
  await db?.drop();
});

async function boot(
  adapter: HttpAdapterName,
  mount: Parameters<typeof McpModule.forRoot>[0],
  prefix?: string,
  fastifyOptions?: FastifyServerOptions,
): Promise<Booted> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
      McpModule.forRoot(mount),
    ],
    providers: [FixtureTools],
  }).compile();
  const logger = new CapturingLogger();
  const app = createHttpApp(moduleRef, adapter, { logger }, fastifyOptions);
  if (prefix) app.setGlobalPrefix(prefix);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const booted = { app, origin: `http://127.0.0.1:${port}`, port, logger };
  running.push(booted);
  return booted;
}

/** A raw HTTP/1.1 exchange on a socket: what the server wrote, and whether it closed the connection. */
interface RawConnection {
  socket: Socket;
  received(): string;
  closed(): boolean;
  /** Bytes of body the client managed to write before the connection went away. */
  written(): number;
}

async function openRaw(port: number, head: string): Promise<RawConnection> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  let closed = false;
  let written = 0;
  socket.on('data', (chunk) => (text += chunk.toString('latin1')));
  socket.on('error', () => (closed = true));
  socket.on('close', () => (closed = true));
  socket.write(head);
  const connection: RawConnection = { socket, received: () => text, closed: () => closed, written: () => written };
  const write = socket.write.bind(socket);
  socket.write = (chunk: Buffer | string, ...rest: never[]) => {
    written += Buffer.byteLength(chunk);
    return write(chunk, ...rest);
  };
  return connection;
}

async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function requestHead(path: string, headers: Record<string, string>): string {
  const lines = Object.entries({
    Host: '127.0.0.1',
    Authorization: 'Bearer token-alice',
    'Content-Type': 'application/json',
    Accept: MCP_ACCEPT,
    ...headers,
  });
  return `POST ${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`;
}

function jsonBodyOf(raw: string): unknown {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return JSON.parse(body);
}

describe.each(HTTP_ADAPTERS)('input limits that cannot be bypassed (PostgreSQL, %s)', (adapter) => {
  async function rowsContaining(text: string): Promise<number> {
    const [row] = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM mcp_events WHERE request::text LIKE $1 OR coalesce(response::text, '') LIKE $1 OR coalesce(note, '') LIKE $1`,
      [`%${text}%`],
    );
    return row.n;
  }

  describe('the bearer token comes from the Authorization header only', () => {
    let server: Booted;
    let url: string;

    beforeAll(async () => {
      server = await boot(adapter, { auth: fixtureAuth });
      url = `${server.origin}/mcp`;
    });

    function expectUnauthorized(reply: { status: number; headers: Headers; text: string }): void {
      expect({ status: reply.status, challenge: reply.headers.get('www-authenticate'), body: reply.text }).toEqual({
        status: 401,
        challenge: expect.stringMatching(/^Bearer\b/),
        body: '',
      });
    }

    it('refuses a valid token in ?access_token= with 401 and WWW-Authenticate: Bearer', async () => {
      expectUnauthorized(await post(`${url}?access_token=token-alice`, initializeRequest(), { token: null }));
    });

    it('refuses a valid token in the JSON body access_token with 401', async () => {
      expectUnauthorized(await post(url, { ...initializeRequest(), access_token: 'token-alice' }, { token: null }));
    });

    it('refuses a body access_token on a path spelling the host parser would have parsed (/MCP/)', async () => {
      const reply = await post(
        `${server.origin}/MCP/`,
        { ...initializeRequest(), access_token: 'token-alice' },
        { token: null },
      );
      // Express routes this spelling to the controller, which refuses the token; Fastify routes the exact path only.
      if (adapter === 'express') expectUnauthorized(reply);
      else
        expect({ status: reply.status, session: reply.headers.get('mcp-session-id') }).toEqual({
          status: 404,
          session: null,
        });
    });

    it('refuses a query token on a live session too, and the session is not touched', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(`${url}?access_token=token-alice`, callRequest(1, 'whoami'), {
        token: null,
        sessionId,
        headers: versionHeader(),
      });
      expectUnauthorized(reply);
    });

    it('still accepts the header token, and no row or log line holds a token', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest(2, 'whoami'), { sessionId, headers: versionHeader() });
      expect(reply.json.result.structuredContent).toEqual({ principal: 'alice' });
      expect(await rowsContaining('token-alice')).toBe(0);
      expect(server.logger.lines.filter((line) => line.includes('token-alice'))).toEqual([]);
    });
  });

  describe('the module reads the body on every path the router routes to the controller', () => {
    const cases: [label: string, prefix: string | undefined, base: string, variants: string[]][] = [
      [
        'no prefix',
        undefined,
        '/mcp',
        [
          '/mcp',
          '/MCP',
          '/Mcp',
          '/mcp/',
          '/MCP/',
          '//mcp',
          '/mcp//',
          '///mcp',
          '/m%63p',
          '/%6Dcp',
          '/%4D%43%50',
          '/m%63p/',
          '/%2Fmcp',
        ],
      ],
      [
        'setGlobalPrefix("api")',
        'api',
        '/api/mcp',
        [
          '/api/mcp',
          '/API/MCP',
          '/api/mcp/',
          '/Api/Mcp/',
          '//api/mcp',
          '/api//mcp',
          '/api/mcp//',
          '/api/m%63p',
          '/%61pi/mcp',
          '/%61pi/%6d%63%70',
        ],
      ],
    ];

    describe.each(cases)('%s', (_label, prefix, base, variants) => {
      let server: Booted;

      beforeAll(async () => {
        server = await boot(adapter, { auth: fixtureAuth, advanced: { maxBodyBytes: 1024 } }, prefix);
      });

      /** True when the router hands this spelling to the controller (a PUT then gets the controller's 405). */
      async function routed(path: string): Promise<boolean> {
        const response = await fetch(`${server.origin}${path}`, { method: 'PUT' });
        await response.arrayBuffer();
        expect([404, 405]).toContain(response.status);
        return response.status === 405;
      }

      // Express ignores letter case and a trailing slash by default; Fastify routes the exact path,
      // after decoding its percent-escapes.
      it('routes at least the canonical path (and on Express a case variant and a trailing slash, on Fastify an escaped letter)', async () => {
        const routedOnes: string[] = [];
        for (const variant of variants) if (await routed(variant)) routedOnes.push(variant);
        expect(routedOnes).toEqual(
          expect.arrayContaining(
            adapter === 'express' ? [base, base.toUpperCase(), `${base}/`] : [base, base.replace('mcp', 'm%63p')],
          ),
        );
      });

      it.each(variants)(
        '%s: a body over maxBodyBytes gets the module 413, invalid JSON its 400 -32700',
        async (variant) => {
          const target = `${server.origin}${variant}`;
          if (!(await routed(variant))) {
            // The router does not route this spelling to the controller (repeated slashes; on Fastify
            // also letter case and a trailing slash): the module still reads the body (its path
            // matching is wider than the router's), so an oversized one gets the module's 413, and
            // one that fits reaches the router's 404.
            const refused = await post(target, callRequest(1, 'echo', { text: 'x'.repeat(2048) }));
            expect({ status: refused.status, code: refused.json?.error?.code }).toEqual({ status: 413, code: -32000 });
            expect((await post(target, initializeRequest())).status).toBe(404);
            return;
          }
          const big = await post(target, callRequest(1, 'echo', { text: 'x'.repeat(2048) }));
          expect({ status: big.status, body: big.json }).toEqual({
            status: 413,
            body: {
              jsonrpc: '2.0',
              id: null,
              error: { code: -32000, message: 'Payload Too Large: the body exceeds 1024 bytes' },
            },
          });
          const broken = await post(target, '{"jsonrpc":"2.0","id":1,"method":');
          expect({ status: broken.status, code: broken.json?.error?.code, id: broken.json?.id }).toEqual({
            status: 400,
            code: -32700,
            id: null,
          });
          const opened = await post(target, initializeRequest());
          expect(opened.status).toBe(200);
          expect(opened.headers.get('mcp-session-id')).toEqual(expect.any(String));
        },
      );
    });
  });

  describe('a body that stalls after the headers is answered within bodyTimeoutMs, on every spelling of the path', () => {
    const timeoutMs = 500;
    // The correctness bound of a slow-body answer: the deadline, three times over, plus two seconds of a loaded machine.
    const bound = timeoutMs * 3 + 2000;
    let server: Booted;
    let prefixed: Booted;

    const paths = ['/mcp', '/MCP', '/mcp/', '//mcp', '/m%63p', '/%6Dcp', '/m%63p/'];
    const prefixedPaths = ['/api/mcp', '/api/m%63p', '/%61pi/mcp', '/API/MCP/'];
    const chunkedPaths = ['/mcp', '/m%63p'];
    const methods = ['DELETE', 'PUT', 'GET'];
    /**
     * The stalled exchange of each case below, by the case's name. Each one waits out
     * bodyTimeoutMs: they are all started together once the servers are up, rather than one after
     * another, and each case checks its own.
     */
    const cuts = new Map<string, Promise<string>>();

    beforeAll(async () => {
      [server, prefixed] = await Promise.all([
        boot(adapter, { auth: fixtureAuth, advanced: { bodyTimeoutMs: timeoutMs } }),
        boot(adapter, { auth: fixtureAuth, advanced: { bodyTimeoutMs: timeoutMs } }, 'api'),
      ]);
      const plain = (path: string) => requestHead(path, { 'Content-Length': '200' });
      for (const path of paths) stall(`POST ${path}`, server, plain(path));
      for (const path of prefixedPaths) stall(`POST ${path} under a global prefix`, prefixed, plain(path));
      for (const path of chunkedPaths)
        stall(
          `POST ${path} with a chunked body`,
          server,
          requestHead(path, { 'Transfer-Encoding': 'chunked' }),
          '1\r\n{\r\n',
        );
      for (const method of methods)
        stall(`${method} /m%63p announcing a body`, server, plain('/m%63p').replace(/^POST /, `${method} `));
    });

    /**
     * Sends the head and the first byte of the body (`first`, framed as the head says), then
     * nothing more, and keeps (under `name`) what the server wrote before it closed the
     * connection, which must happen within the bound.
     */
    function stall(name: string, booted: Booted, head: string, first = '{'): void {
      const cut = (async () => {
        const raw = await openRaw(booted.port, head);
        raw.socket.write(first);
        try {
          await until(() => raw.closed(), `the server to cut the stalled body within ${bound} ms`, bound);
          return raw.received();
        } finally {
          raw.socket.destroy();
        }
      })();
      // Its case awaits it (and fails with its error) later: until then its failure is not unhandled.
      cut.catch(() => undefined);
      cuts.set(name, cut);
    }

    async function expectCut(name: string): Promise<void> {
      const received = await cuts.get(name);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(jsonBodyOf(received as string)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: `Request Timeout: the body did not arrive within ${timeoutMs} ms` },
      });
    }

    it.each(paths)('POST %s', async (path) => {
      await expectCut(`POST ${path}`);
    });

    it.each(prefixedPaths)('POST %s under a global prefix', async (path) => {
      await expectCut(`POST ${path} under a global prefix`);
    });

    it.each(chunkedPaths)('POST %s with a chunked body', async (path) => {
      await expectCut(`POST ${path} with a chunked body`);
    });

    it.each(methods)('%s /m%%63p announcing a body', async (method) => {
      await expectCut(`${method} /m%63p announcing a body`);
    });
  });

  describe('an oversized request gets a 413 the client can read', () => {
    let server: Booted;
    let small: Booted;
    let url: string;

    beforeAll(async () => {
      [server, small] = await Promise.all([
        boot(adapter, { auth: fixtureAuth }),
        boot(adapter, {
          auth: fixtureAuth,
          advanced: { maxBodyBytes: 1024, bodyTimeoutMs: 300 },
          mount: 'small',
          path: '/small/mcp',
        }),
      ]);
      url = `${server.origin}/mcp`;
    });

    const fiveMiB = 'a'.repeat(5 * 1024 * 1024);

    it('fetch with a 5 MiB body and a Content-Length sees HTTP 413 and the JSON-RPC error', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest(1, 'echo', { text: fiveMiB }), { sessionId, headers: versionHeader() });
      expect({ status: reply.status, code: reply.json?.error?.code }).toEqual({ status: 413, code: -32000 });
    });

    it('fetch with a 5 MiB chunked body (no Content-Length) sees HTTP 413', async () => {
      const bytes = new TextEncoder().encode(JSON.stringify(callRequest(1, 'echo', { text: fiveMiB })));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
          controller.close();
        },
      });
      const response = await fetch(url, {
        method: 'POST',
        headers: { Authorization: 'Bearer token-alice', 'Content-Type': 'application/json', Accept: MCP_ACCEPT },
        body,
        duplex: 'half',
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 413,
        body: {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: `Payload Too Large: the body exceeds ${4 * 1024 * 1024} bytes` },
        },
      });
    });

    it('the official SDK client sending a 5 MiB tool argument gets a StreamableHTTPError with code 413, then works on', async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      });
      const client = new Client({ name: 'big-sender', version: '1.0.0' });
      await client.connect(transport);
      try {
        const error = await client.callTool({ name: 'echo', arguments: { text: fiveMiB } }).then(
          () => null,
          (failure: unknown) => failure,
        );
        expect(error).toBeInstanceOf(StreamableHTTPError);
        expect((error as StreamableHTTPError).code).toBe(413);
        const small = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
        expect(small.content).toEqual([{ type: 'text', text: 'still here' }]);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    });

    it('a client that streams far past the discard bound is disconnected', async () => {
      const raw = await openRaw(small.port, requestHead('/small/mcp', { 'Transfer-Encoding': 'chunked' }));
      const chunk = Buffer.from(`400\r\n${'b'.repeat(1024)}\r\n`);
      const ceiling = 64 * 1024 * 1024;
      while (!raw.closed() && raw.written() < ceiling) {
        // Wait for room in the socket buffer (or for the close), polling so a close that came
        // first cannot be missed.
        if (!raw.socket.write(chunk))
          await until(() => raw.closed() || raw.socket.writableLength === 0, 'room to write', 20_000);
      }
      expect(raw.closed()).toBe(true);
      expect(raw.written()).toBeLessThan(ceiling);
      raw.socket.destroy();
    });

    it('a body trickled a byte at a time past bodyTimeoutMs gets 408 and the connection is closed', async () => {
      const raw = await openRaw(small.port, requestHead('/small/mcp', { 'Content-Length': '200' }));
      raw.socket.write('{');
      await until(() => raw.closed(), 'the server to close the trickling connection');
      expect(raw.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(jsonBodyOf(raw.received())).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Request Timeout: the body did not arrive within 300 ms' },
      });
    });
  });
});

describe('input limits on a Fastify app whose router ignores letter case and a trailing slash (PostgreSQL)', () => {
  let server: Booted;

  beforeAll(async () => {
    server = await boot('fastify', { auth: fixtureAuth, advanced: { maxBodyBytes: 1024 } }, undefined, {
      routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    });
  });

  it.each(['/mcp', '/MCP', '/mcp/', '/Mcp/'])(
    '%s is served: the module 413, its 400 -32700, then a session',
    async (variant) => {
      const target = `${server.origin}${variant}`;
      const big = await post(target, callRequest(1, 'echo', { text: 'x'.repeat(2048) }));
      expect({ status: big.status, code: big.json?.error?.code }).toEqual({ status: 413, code: -32000 });
      const broken = await post(target, '{"jsonrpc":"2.0","id":1,"method":');
      expect({ status: broken.status, code: broken.json?.error?.code }).toEqual({ status: 400, code: -32700 });
      const opened = await post(target, initializeRequest());
      expect({ status: opened.status, session: typeof opened.headers.get('mcp-session-id') }).toEqual({
        status: 200,
        session: 'string',
      });
    },
  );
});
