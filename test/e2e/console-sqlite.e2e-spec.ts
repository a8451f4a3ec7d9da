import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, McpModule } from '../../src/mcp';
import { CONSOLE_TOKEN, ScopedConsoleGuard, TestConsoleGuard, scopeOfReader } from '../fixtures/console/console-guard';
import { FixtureTools, OtherMountTools, fixtureAuth } from '../fixtures/fixture-tools';
import { createHttpApp } from '../support/http-app';
import { McpConsoleModule } from '../../src/mcp/console';

jest.setTimeout(60_000);

const AUTH = { Authorization: `Bearer ${CONSOLE_TOKEN}` };

/** GETs a console page with supertest and the console token. */
async function page(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  const response = await request(baseUrl).get(path).set(AUTH);
  return { status: response.status, body: response.text };
}

function rowIds(html: string): string[] {
  return [...html.matchAll(/<tr data-event="([^"]+)"/g)].map((m) => m[1]);
}

/**
 * The console on the example app's database, SQLite (better-sqlite3, `synchronize`), with two
 * mounts and `mount: 'default'`: the JSON tool filter, booleans, time bounds and keyset pages in
 * SQLite's dialect, and the mount scope.
 */
describe('the audit console on SQLite, scoped to one mount', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-console-'));
  const database = join(dir, 'console.sqlite');
  let app: INestApplication;
  let baseUrl: string;
  let db: DataSource;
  let startedAt: number;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database, entities: MCP_ENTITIES, synchronize: true }),
        McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools] }),
        McpModule.forRoot({ mount: 'other', path: '/other/mcp', auth: fixtureAuth, providers: [OtherMountTools] }),
        McpConsoleModule.forRoot({ path: '/ops/console/', guard: TestConsoleGuard, mount: 'default', pageSize: 2 }),
      ],
      providers: [FixtureTools, OtherMountTools],
    }).compile();
    app = createHttpApp(moduleRef, 'express', { logger: ['error', 'warn'] });
    app.setGlobalPrefix('api');
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    startedAt = Date.now();
    for (const [path, tool] of [
      ['/api/mcp', 'echo'],
      ['/api/other/mcp', 'other_only'],
    ]) {
      const client = new Client({ name: 'sqlite-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), {
          requestInit: { headers: { Authorization: 'Bearer token-alice' } },
        }),
      );
      await client.callTool({ name: tool, arguments: tool === 'echo' ? { text: 'on sqlite' } : {} });
      if (tool === 'echo') await client.callTool({ name: 'fail', arguments: {} });
      await client.close();
    }
    db = new DataSource({ type: 'better-sqlite3', database, entities: MCP_ENTITIES });
    await db.initialize();
  });

  afterAll(async () => {
    await db?.destroy();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function listed(query: string): Promise<string[]> {
    const ids: string[] = [];
    for (let path: string | undefined = `/api/ops/console/events${query}`; path;) {
      const { status, body } = await page(baseUrl, path);
      expect({ path, status }).toEqual({ path, status: 200 });
      ids.push(...rowIds(body));
      path = /<a href="([^"]+)" rel="next">/.exec(body)?.[1].replace(/&amp;/g, '&');
    }
    return ids;
  }

  it("lists only the mount's events, newest first across keyset pages, under the global prefix", async () => {
    const rows: { id: string; mount: string }[] = await db.query(
      `SELECT id, mount FROM mcp_events ORDER BY created_at DESC, id DESC`,
    );
    expect(rows.some((r) => r.mount === 'other')).toBe(true);
    expect(await listed('')).toEqual(rows.filter((r) => r.mount === 'default').map((r) => r.id));
  });

  it('filters by tool (JSON in SQLite), status, principal and time', async () => {
    const rows: { id: string; method: string; is_error: number; tool: string | null }[] = await db.query(
      `SELECT id, method, is_error, json_extract(request, '$.params.name') AS tool FROM mcp_events WHERE mount = 'default' ORDER BY created_at DESC, id DESC`,
    );
    const echo = rows.filter((r) => r.method === 'tools/call' && r.tool === 'echo').map((r) => r.id);
    expect(echo).toHaveLength(1);
    expect(await listed('?tool=echo')).toEqual(echo);
    expect(await listed('?tool=other_only')).toEqual([]);
    expect(await listed('?status=error')).toEqual(rows.filter((r) => r.is_error === 1).map((r) => r.id));
    expect(await listed('?status=error')).toHaveLength(1);
    expect(await listed('?status=ok')).toEqual(rows.filter((r) => r.is_error === 0).map((r) => r.id));
    expect(await listed('?principal=bob')).toEqual([]);
    expect(await listed('?principal=alice')).toEqual(rows.map((r) => r.id));
    const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    expect(await listed(`?from=${iso(startedAt - 60_000)}&to=${iso(Date.now() + 60_000)}`)).toEqual(
      rows.map((r) => r.id),
    );
    expect(await listed(`?from=${iso(Date.now() + 60_000)}`)).toEqual([]);
  });

  it('shows sessions and the chart of the mount only, and links stay under the prefix', async () => {
    const sessions = (await page(baseUrl, '/api/ops/console/sessions')).body;
    const ids = [...sessions.matchAll(/<tr data-session="([^"]+)"/g)].map((m) => m[1]);
    const expected: { id: string }[] = await db.query(`SELECT id FROM mcp_inbound_sessions WHERE mount = 'default'`);
    expect(ids).toEqual(expected.map((r) => r.id));
    expect(sessions).toContain('<a href="/api/ops/console/events">Events</a>');
    const overview = (await page(baseUrl, '/api/ops/console')).body;
    const data = JSON.parse(/id="mcp-chart-data">([^<]*)</.exec(overview)![1]) as { count: number[] };
    const [{ n }] = await db.query(`SELECT count(*) AS n FROM mcp_events WHERE kind = 'request' AND mount = 'default'`);
    expect(data.count.reduce((a, b) => a + b, 0)).toBe(n);
    expect(overview).toContain('<script src="/api/ops/console/assets/uPlot.iife.min.js"></script>');
    const tasks = (await page(baseUrl, '/api/ops/console/tasks')).body;
    expect(tasks).toContain('No tasks.');
  });
});

/** The `scope` option in SQLite's dialect: alice's view lists her own rows only, and another principal's event by id is 404. */
describe('the audit console on SQLite with a per-reader scope', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-console-scope-'));
  const database = join(dir, 'console.sqlite');
  let app: INestApplication;
  let baseUrl: string;
  let db: DataSource;

  const as = (reader: string, path: string) =>
    request(baseUrl)
      .get(path)
      .set({ Authorization: `Bearer ${reader}` })
      .then((r) => ({ status: r.status, body: r.text }));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'better-sqlite3', database, entities: MCP_ENTITIES, synchronize: true }),
        McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools] }),
        McpConsoleModule.forRoot({ guard: ScopedConsoleGuard, scope: scopeOfReader, pageSize: 500 }),
      ],
      providers: [FixtureTools],
    }).compile();
    app = createHttpApp(moduleRef, 'express', { logger: ['error', 'warn'] });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    for (const token of ['token-alice', 'token-bob']) {
      const client = new Client({ name: `sqlite-scope-${token}`, version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      await client.callTool({ name: 'echo', arguments: { text: `argument of ${token}` } });
      await client.close();
    }
    db = new DataSource({ type: 'better-sqlite3', database, entities: MCP_ENTITIES });
    await db.initialize();
  });

  afterAll(async () => {
    await db?.destroy();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists only alice's sessions, events and requests for her, everyone's for the operator, and 404 for bob's event by id", async () => {
    const ids = async (sql: string) => (await db.query<{ id: string }[]>(sql)).map((r) => r.id);
    const aliceEvents = await ids(
      `SELECT id FROM mcp_events WHERE principal_key = 'alice' ORDER BY created_at DESC, id DESC`,
    );
    expect(rowIds((await as('console-alice', '/mcp-console/events')).body)).toEqual(aliceEvents);
    expect(rowIds((await as('console-operator', '/mcp-console/events')).body)).toEqual(
      await ids(`SELECT id FROM mcp_events ORDER BY created_at DESC, id DESC`),
    );
    const sessions = (await as('console-alice', '/mcp-console/sessions')).body;
    expect([...sessions.matchAll(/<tr data-session="([^"]+)"/g)].map((m) => m[1])).toEqual(
      await ids(`SELECT id FROM mcp_inbound_sessions WHERE principal_key = 'alice'`),
    );
    const overview = (await as('console-alice', '/mcp-console')).body;
    const data = JSON.parse(/id="mcp-chart-data">([^<]*)</.exec(overview)![1]) as { count: number[] };
    const [{ n }] = await db.query(
      `SELECT count(*) AS n FROM mcp_events WHERE kind = 'request' AND principal_key = 'alice'`,
    );
    expect(data.count.reduce((a, b) => a + b, 0)).toBe(n);
    const [bobEcho] = await ids(`SELECT id FROM mcp_events WHERE principal_key = 'bob' AND method = 'tools/call'`);
    const theirs = await as('console-alice', `/mcp-console/events/${bobEcho}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body).not.toContain('argument of token-bob');
    expect((await as('console-operator', `/mcp-console/events/${bobEcho}`)).body).toContain('argument of token-bob');
  });
});
