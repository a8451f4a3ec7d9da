import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { MCP_ENTITIES, McpModule } from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { ScopedConsoleGuard, TestConsoleGuard, CONSOLE_TOKEN, scopeOfReader } from '../fixtures/console/console-guard';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { TaskGates, TaskTools } from '../fixtures/tasks/task-tools';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { McpConsoleModule } from '../../src/mcp/console';

jest.setTimeout(60_000);

const SCRIPT = '<script>alert(1)</script>';
const AUTH = { Authorization: `Bearer ${CONSOLE_TOKEN}` };

/** GETs a console URL with supertest, with the console token (unless headers say otherwise). */
async function get(baseUrl: string, path: string, headers: Record<string, string> = AUTH) {
  const response = await request(baseUrl).get(path).set(headers).redirects(0);
  return { status: response.status, headers: new Headers(response.headers), body: response.text };
}

/** The ids of the rows of a console table (`data-event`, `data-session`, `data-task`), in page order. */
function rowIds(html: string, kind: 'event' | 'session' | 'task'): string[] {
  return [...html.matchAll(new RegExp(`<tr data-${kind}="([^"]+)"`, 'g'))].map((m) => m[1]);
}

/** The `href` of the pager's "Older" link, unescaped, or undefined on the last page. */
function olderLink(html: string): string | undefined {
  const match = /<a href="([^"]+)" rel="next">/.exec(html);
  return match?.[1].replace(/&amp;/g, '&');
}

/** The chart's data island of the overview page. */
function chartData(html: string): {
  t: number[];
  count: number[];
  errors: number[];
  p50: (number | null)[];
  p95: (number | null)[];
  truncated: boolean;
} {
  const match = /<script type="application\/json" id="mcp-chart-data">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error('no chart data island on the page');
  return JSON.parse(match[1]);
}

async function connect(baseUrl: string, token: string, name = 'console-e2e', version = '1.2.3') {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(transport);
  return { client, transport };
}

describe.each(HTTP_ADAPTERS)('the audit console on PostgreSQL (%s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp;
  let startedAt: number;
  let aliceSession: string;
  let bobSession: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools, TaskTools], tasks: { pollIntervalMs: 50 } }),
          McpConsoleModule.forRoot({ guard: TestConsoleGuard, pageSize: 3 }),
        ],
        providers: [FixtureTools, TaskTools],
      },
      adapter,
    );
    startedAt = Date.now();
    // What real clients leave: alice echoes a script tag and fails once, then ends her session;
    // bob asks who he is and runs a task to its end, and keeps his session open.
    const alice = await connect(server.baseUrl, 'token-alice');
    aliceSession = alice.transport.sessionId as string;
    await alice.client.callTool({ name: 'echo', arguments: { text: SCRIPT } });
    await alice.client.callTool({ name: 'fail', arguments: {} });
    await alice.transport.terminateSession();
    await alice.client.close();
    const bob = await connect(server.baseUrl, 'token-bob', 'bob-client', '9.9.9');
    bobSession = bob.transport.sessionId as string;
    await bob.client.callTool({ name: 'whoami', arguments: {} });
    const gate = `console-${adapter}`;
    const { task } = await bob.client.request(
      { method: 'tools/call', params: { name: 'report', arguments: { gate }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    TaskGates.open(gate);
    await pollUntil('the task to complete', async () =>
      (await bob.client.experimental.tasks.getTask(task.taskId)).status === 'completed' ? true : undefined,
    );
    await bob.client.close();
    // Two more sessions, so the sessions page has more than one page.
    for (const name of ['extra-1', 'extra-2']) {
      const extra = await connect(server.baseUrl, 'token-alice', name);
      await extra.transport.terminateSession();
      await extra.client.close();
    }
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('refuses a reader without credentials (401) or with the wrong ones (403), assets included', async () => {
    for (const path of [
      '/mcp-console',
      '/mcp-console/sessions',
      '/mcp-console/events',
      '/mcp-console/tasks',
      '/mcp-console/assets/uPlot.iife.min.js',
    ]) {
      const anonymous = await get(server.baseUrl, path, {});
      expect({ path, status: anonymous.status }).toEqual({ path, status: 401 });
      expect(anonymous.body).not.toContain('alice');
      expect(JSON.parse(anonymous.body)).toMatchObject({ statusCode: 401, message: 'credentials required' });
      expect(anonymous.headers.get('cache-control')).toBe('no-store');
      expect(anonymous.headers.get('x-content-type-options')).toBe('nosniff');
      const wrong = await get(server.baseUrl, path, { Authorization: 'Bearer token-alice' });
      expect({ path, status: wrong.status }).toEqual({ path, status: 403 });
    }
  });

  it('lists the sessions with principal, client, revision, age and state (live, ended, expired)', async () => {
    const rows: { id: string; principal: string }[] = await db.dataSource.query(
      `SELECT id, principal_key AS principal FROM mcp_inbound_sessions WHERE session_id IN ($1, $2)`,
      [aliceSession, bobSession],
    );
    // Both pages (three rows a page, four sessions).
    const sessionPages = async () => {
      const newest = await get(server.baseUrl, '/mcp-console/sessions');
      expect(newest.status).toBe(200);
      expect(newest.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
      const older = await get(server.baseUrl, olderLink(newest.body)!);
      expect(older.status).toBe(200);
      return newest.body + older.body;
    };
    const first = { body: await sessionPages() };
    const rowOf = (principal: string) => {
      const id = rows.find((r) => r.principal === principal)!.id;
      return new RegExp(`<tr data-session="${id}">(.*?)</tr>`).exec(first.body)![1];
    };
    expect(rowOf('alice')).toContain('console-e2e');
    expect(rowOf('alice')).toContain('1.2.3');
    expect(rowOf('alice')).toContain('<code>2025-11-25</code>');
    expect(rowOf('alice')).toContain('<span class="badge ended">ended</span>');
    expect(rowOf('bob')).toContain('bob-client');
    expect(rowOf('bob')).toContain('<span class="badge live">live</span>');
    expect(rowOf('bob')).toMatch(/<td title="[^"]+">\d+s<\/td>/);

    // Idle for longer than the TTL (one hour by default): expired, though never ended.
    await db.dataSource.query(
      `UPDATE mcp_inbound_sessions SET last_seen_at = last_seen_at - interval '2 hours' WHERE session_id = $1`,
      [bobSession],
    );
    try {
      const after = { body: await sessionPages() };
      expect(after.body).toMatch(/bob-client.*<span class="badge expired">expired<\/span>/);
    } finally {
      await db.dataSource.query(
        `UPDATE mcp_inbound_sessions SET last_seen_at = last_seen_at + interval '2 hours' WHERE session_id = $1`,
        [bobSession],
      );
    }
  });

  it('pages the sessions newest first: every session once, across pages of pageSize', async () => {
    const all: { id: string }[] = await db.dataSource.query(
      `SELECT id FROM mcp_inbound_sessions ORDER BY created_at DESC, id DESC`,
    );
    expect(all).toHaveLength(4);
    const first = await get(server.baseUrl, '/mcp-console/sessions');
    expect(rowIds(first.body, 'session')).toHaveLength(3);
    const older = olderLink(first.body);
    expect(older).toMatch(/^\/mcp-console\/sessions\?before=\d+\.[0-9a-f-]+$/);
    const second = await get(server.baseUrl, older!);
    expect(olderLink(second.body)).toBeUndefined();
    expect(second.body).toContain('rel="first"');
    expect([...rowIds(first.body, 'session'), ...rowIds(second.body, 'session')]).toEqual(all.map((r) => r.id));
  });

  it('shows each event with its tool and envelopes, and a tool argument that is HTML is shown escaped', async () => {
    const page = await get(server.baseUrl, '/mcp-console/events?tool=echo');
    expect(page.status).toBe(200);
    const [id] = rowIds(page.body, 'event');
    expect(id).toBeDefined();
    expect(page.body).toContain('<td class="tool">echo</td>');
    expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.body).not.toContain(SCRIPT);
    // The only scripts of any page are the console's own files (this page has no chart).
    expect([...page.body.matchAll(/<script/g)]).toHaveLength(0);

    const detail = await get(server.baseUrl, `/mcp-console/events/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toContain('<pre id="request">');
    expect(detail.body).toContain('&quot;name&quot;: &quot;echo&quot;');
    expect(detail.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(detail.body).not.toContain(SCRIPT);
    expect(detail.body).not.toContain('token-alice');
    expect(detail.body).not.toContain(CONSOLE_TOKEN);

    const missing = await get(server.baseUrl, '/mcp-console/events/00000000-0000-0000-0000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('No audit row with id 00000000-0000-0000-0000-000000000000 here.');
  });

  it('narrows the events by principal, method, tool, status and time range', async () => {
    const all: {
      id: string;
      principal_key: string;
      method: string;
      is_error: boolean;
      request: { params?: { name?: string } };
    }[] = await db.dataSource.query(`SELECT id, principal_key, method, is_error, request FROM mcp_events`);
    /** Every event id of a filtered listing, across its pages. */
    const listed = async (query: string) => {
      const ids: string[] = [];
      for (let path: string | undefined = `/mcp-console/events${query}`; path;) {
        const page = await get(server.baseUrl, path);
        expect(page.status).toBe(200);
        ids.push(...rowIds(page.body, 'event'));
        path = olderLink(page.body);
      }
      return ids.sort();
    };
    const ids = (rows: typeof all) => rows.map((r) => r.id).sort();

    expect(await listed('?principal=bob')).toEqual(ids(all.filter((r) => r.principal_key === 'bob')));
    expect(await listed('?principal=bob')).not.toEqual([]);
    expect(await listed('?method=tools%2Fcall')).toEqual(ids(all.filter((r) => r.method === 'tools/call')));
    expect(await listed('?tool=whoami')).toEqual(
      ids(all.filter((r) => r.method === 'tools/call' && r.request?.params?.name === 'whoami')),
    );
    expect(await listed('?tool=whoami')).toHaveLength(1);
    const errors = await listed('?status=error');
    expect(errors).toEqual(ids(all.filter((r) => r.is_error)));
    expect(errors).toHaveLength(1);
    expect(await listed('?status=ok')).toEqual(ids(all.filter((r) => !r.is_error)));
    expect(await listed('?principal=alice&status=error&method=tools%2Fcall&tool=fail')).toEqual(errors);

    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await listed(`?from=${encodeURIComponent(iso(startedAt - 60_000))}`)).toEqual(ids(all));
    expect(await listed(`?from=${encodeURIComponent(iso(Date.now() + 60_000))}`)).toEqual([]);
    expect(await listed(`?to=${encodeURIComponent(iso(startedAt - 60_000))}`)).toEqual([]);
    // The form's datetime-local value (no zone) is read as UTC.
    expect(
      await listed(`?from=${iso(startedAt - 60_000).slice(0, 16)}&to=${iso(Date.now() + 120_000).slice(0, 16)}`),
    ).toEqual(ids(all));
  });

  it('pages the events newest first by keyset: every row once, in order, and the filters survive the Older link', async () => {
    const all: { id: string }[] = await db.dataSource.query(
      `SELECT id FROM mcp_events ORDER BY created_at DESC, id DESC`,
    );
    expect(all.length).toBeGreaterThan(6);
    const seen: string[] = [];
    let pages = 0;
    for (let path: string | undefined = '/mcp-console/events'; path; pages++) {
      const page = await get(server.baseUrl, path);
      const rows = rowIds(page.body, 'event');
      expect(rows.length).toBeLessThanOrEqual(3);
      seen.push(...rows);
      path = olderLink(page.body);
      if (path) expect(rows).toHaveLength(3);
    }
    expect(seen).toEqual(all.map((r) => r.id));
    expect(pages).toBe(Math.ceil(all.length / 3));

    const first = await get(server.baseUrl, '/mcp-console/events?principal=alice');
    expect(olderLink(first.body)).toMatch(/^\/mcp-console\/events\?principal=alice&before=\d+\.[0-9a-f-]+$/);
  });

  it('lists the tasks with tool, status, principal, times and status message', async () => {
    const [task] = await db.dataSource.query(`SELECT id FROM mcp_tasks`);
    const page = await get(server.baseUrl, '/mcp-console/tasks');
    expect(page.status).toBe(200);
    expect(rowIds(page.body, 'task')).toEqual([task.id]);
    const row = new RegExp(`<tr data-task="${task.id}">(.*?)</tr>`).exec(page.body)![1];
    expect(row).toContain('<td>report</td>');
    expect(row).toContain('<span class="badge completed">completed</span>');
    expect(row).toContain('<td>bob</td>');
    expect(row).toContain('<td>step 2 of 2</td>');
    // Never the task's arguments or result.
    expect(page.body).not.toContain('console-' + adapter);
  });

  it('serves the chart page with the last hour per minute as a JSON island, and uPlot from the package', async () => {
    const page = await get(server.baseUrl, '/mcp-console');
    expect(page.status).toBe(200);
    const data = chartData(page.body);
    expect(data.t).toHaveLength(60);
    expect(data.t[1] - data.t[0]).toBe(60);
    const [{ n }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events WHERE kind = 'request'`);
    expect(data.count.reduce((a, b) => a + b, 0)).toBe(n);
    // alice's `fail` is the one failed request of the hour.
    expect(data.errors.reduce((a, b) => a + b, 0)).toBe(1);
    expect(page.body).toContain(`<p id="summary">${n} requests in the last hour, 1 failed.</p>`);
    // The newest events are listed under the chart, newest first.
    const newest: { id: string }[] = await db.dataSource.query(
      `SELECT id FROM mcp_events ORDER BY created_at DESC, id DESC LIMIT 3`,
    );
    expect(rowIds(page.body, 'event')).toEqual(newest.map((r) => r.id));
    const busy = data.count.findIndex((c) => c > 0);
    expect(data.p50[busy]).toEqual(expect.any(Number));
    expect(data.p95[busy]!).toBeGreaterThanOrEqual(data.p50[busy]!);
    expect(data.p50[data.count.findIndex((c) => c === 0)]).toBeNull();
    expect(page.body).toContain('<script src="/mcp-console/assets/uPlot.iife.min.js"></script>');
    expect(page.body).toContain('<script src="/mcp-console/assets/console-chart.js"></script>');

    const uplot = await get(server.baseUrl, '/mcp-console/assets/uPlot.iife.min.js');
    expect(uplot.status).toBe(200);
    expect(uplot.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(uplot.body).toBe(readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'));
    const css = await get(server.baseUrl, '/mcp-console/assets/uPlot.min.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await get(server.baseUrl, '/mcp-console/assets/console-chart.js')).body).toContain('new uPlot(');
    expect((await get(server.baseUrl, '/mcp-console/assets/..%2Fpackage.json')).status).toBe(404);
    expect((await get(server.baseUrl, '/mcp-console/assets/nothing.js')).status).toBe(404);
  });

  it('sends a strict CSP, nosniff and no-store with every page and asset', async () => {
    for (const path of [
      '/mcp-console',
      '/mcp-console/sessions',
      '/mcp-console/events',
      '/mcp-console/tasks',
      '/mcp-console/assets/console.css',
      '/mcp-console/events?status=maybe',
    ]) {
      const { headers } = await get(server.baseUrl, path);
      expect({ path, csp: headers.get('content-security-policy') }).toEqual({
        path,
        csp: expect.stringContaining("script-src 'self'; style-src 'self'"),
      });
      expect(headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(headers.get('cache-control')).toBe('no-store');
    }
  });

  it('answers a query it cannot use with 400 and the reason', async () => {
    const cases: [string, string][] = [
      ['/mcp-console/events?status=maybe', '&quot;status&quot; must be ok or error'],
      ['/mcp-console/events?from=yesterday', '&quot;from&quot; must be a time'],
      [
        '/mcp-console/events?from=2026-01-02T00:00&to=2026-01-01T00:00',
        '&quot;from&quot; must be before &quot;to&quot;',
      ],
      ['/mcp-console/events?principal=a&principal=b', '&quot;principal&quot; was given 2 times'],
      ['/mcp-console/sessions?before=nonsense', '&quot;before&quot; is not a page cursor'],
      ['/mcp-console/tasks?before=1.%3Cx%3E', '&quot;before&quot; is not a page cursor'],
    ];
    for (const [path, reason] of cases) {
      const page = await get(server.baseUrl, path);
      expect({ path, status: page.status }).toEqual({ path, status: 400 });
      expect(page.body).toContain(reason);
    }
  });
});

/**
 * The `scope` option on PostgreSQL, on each adapter: the operator's scope is every row, alice's
 * view only her own rows on every page (sessions, events and their filters, an event by id,
 * tasks, the overview's chart and newest events); another principal's event by id answers 404
 * like an unknown one. An empty scope shows nothing, and a scope function that returns nonsense
 * answers 500 without a row.
 */
describe.each(HTTP_ADAPTERS)('the audit console with a per-reader scope on PostgreSQL (%s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp;
  const as = (reader: string) => ({ Authorization: `Bearer ${reader}` });

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools, TaskTools], tasks: { pollIntervalMs: 50 } }),
          McpConsoleModule.forRoot({ guard: ScopedConsoleGuard, scope: scopeOfReader, pageSize: 2 }),
        ],
        providers: [FixtureTools, TaskTools],
      },
      adapter,
    );
    const alice = await connect(server.baseUrl, 'token-alice', 'alice-client');
    await alice.client.callTool({ name: 'echo', arguments: { text: 'alice argument' } });
    await alice.client.callTool({ name: 'fail', arguments: {} });
    await alice.client.close();
    const bob = await connect(server.baseUrl, 'token-bob', 'bob-client');
    await bob.client.callTool({ name: 'echo', arguments: { text: 'bob secret argument' } });
    const gate = `console-scope-${adapter}`;
    const { task } = await bob.client.request(
      { method: 'tools/call', params: { name: 'report', arguments: { gate }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    TaskGates.open(gate);
    await pollUntil('the task to complete', async () =>
      (await bob.client.experimental.tasks.getTask(task.taskId)).status === 'completed' ? true : undefined,
    );
    await bob.client.close();
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  /** Every row id of a listing, across its pages. */
  async function listed(reader: string, path: string, kind: 'event' | 'session' | 'task'): Promise<string[]> {
    const ids: string[] = [];
    for (let next: string | undefined = path; next;) {
      const page = await get(server.baseUrl, next, as(reader));
      expect({ next, status: page.status }).toEqual({ next, status: 200 });
      ids.push(...rowIds(page.body, kind));
      next = olderLink(page.body);
    }
    return ids;
  }

  const idsOf = async (sql: string, params: unknown[] = []) =>
    (await db.dataSource.query<{ id: string }[]>(sql, params)).map((r) => r.id);

  it("the operator (scope all) sees every principal's sessions, events, tasks and requests in the chart", async () => {
    expect(await listed('console-operator', '/mcp-console/sessions', 'session')).toEqual(
      await idsOf(`SELECT id FROM mcp_inbound_sessions ORDER BY created_at DESC, id DESC`),
    );
    const events = await idsOf(`SELECT id FROM mcp_events ORDER BY created_at DESC, id DESC`);
    expect(await listed('console-operator', '/mcp-console/events', 'event')).toEqual(events);
    expect(await listed('console-operator', '/mcp-console/tasks', 'task')).toEqual(
      await idsOf(`SELECT id FROM mcp_tasks`),
    );
    const overview = await get(server.baseUrl, '/mcp-console', as('console-operator'));
    const [{ n }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events WHERE kind = 'request'`);
    expect(chartData(overview.body).count.reduce((a, b) => a + b, 0)).toBe(n);
    expect(rowIds(overview.body, 'event')).toEqual(events.slice(0, 2));
    const [bobEcho] = await idsOf(`SELECT id FROM mcp_events WHERE principal_key = 'bob' AND method = 'tools/call'`);
    const detail = await get(server.baseUrl, `/mcp-console/events/${bobEcho}`, as('console-operator'));
    expect(detail.status).toBe(200);
    expect(detail.body).toContain('bob secret argument');
  });

  it("alice's view shows only her own rows on every page", async () => {
    const sessions = await idsOf(
      `SELECT id FROM mcp_inbound_sessions WHERE principal_key = 'alice' ORDER BY created_at DESC, id DESC`,
    );
    expect(sessions).toHaveLength(1);
    expect(await listed('console-alice', '/mcp-console/sessions', 'session')).toEqual(sessions);

    const own = await idsOf(
      `SELECT id FROM mcp_events WHERE principal_key = 'alice' ORDER BY created_at DESC, id DESC`,
    );
    expect(own.length).toBeGreaterThan(2);
    expect(await listed('console-alice', '/mcp-console/events', 'event')).toEqual(own);
    expect(await listed('console-alice', '/mcp-console/events?principal=bob', 'event')).toEqual([]);
    expect(await listed('console-alice', '/mcp-console/events?tool=echo', 'event')).toEqual(
      await idsOf(
        `SELECT id FROM mcp_events WHERE principal_key = 'alice' AND method = 'tools/call' AND request -> 'params' ->> 'name' = 'echo'`,
      ),
    );
    for (const path of ['/mcp-console/events', '/mcp-console/sessions', '/mcp-console/events?tool=echo']) {
      expect((await get(server.baseUrl, path, as('console-alice'))).body).not.toMatch(/bob/);
    }

    const tasks = await get(server.baseUrl, '/mcp-console/tasks', as('console-alice'));
    expect(rowIds(tasks.body, 'task')).toEqual([]);
    expect(tasks.body).toContain('No tasks.');

    const overview = await get(server.baseUrl, '/mcp-console', as('console-alice'));
    const [{ n }] = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM mcp_events WHERE kind = 'request' AND principal_key = 'alice'`,
    );
    const [{ all }] = await db.dataSource.query(`SELECT count(*)::int AS all FROM mcp_events WHERE kind = 'request'`);
    expect(n).toBeLessThan(all);
    expect(chartData(overview.body).count.reduce((a, b) => a + b, 0)).toBe(n);
    expect(rowIds(overview.body, 'event')).toEqual(own.slice(0, 2));
  });

  it("alice's view answers 404 for another principal's event by id, as for an unknown id, and 200 for her own", async () => {
    const [bobEcho] = await idsOf(
      `SELECT id FROM mcp_events WHERE principal_key = 'bob' AND method = 'tools/call' AND request -> 'params' ->> 'name' = 'echo'`,
    );
    const theirs = await get(server.baseUrl, `/mcp-console/events/${bobEcho}`, as('console-alice'));
    expect(theirs.status).toBe(404);
    expect(theirs.body).toContain(`No audit row with id ${bobEcho} here.`);
    expect(theirs.body).not.toContain('bob secret argument');
    const [aliceEcho] = await idsOf(
      `SELECT id FROM mcp_events WHERE principal_key = 'alice' AND method = 'tools/call' AND request -> 'params' ->> 'name' = 'echo'`,
    );
    const mine = await get(server.baseUrl, `/mcp-console/events/${aliceEcho}`, as('console-alice'));
    expect(mine.status).toBe(200);
    expect(mine.body).toContain('alice argument');
  });

  it('an empty scope shows nothing on any page', async () => {
    for (const kind of ['session', 'event', 'task'] as const) {
      expect(await listed('console-nobody', `/mcp-console/${kind}s`, kind)).toEqual([]);
    }
    const overview = await get(server.baseUrl, '/mcp-console', as('console-nobody'));
    expect(chartData(overview.body).count.reduce((a, b) => a + b, 0)).toBe(0);
    expect(rowIds(overview.body, 'event')).toEqual([]);
  });
});

describe('the audit console with a scope function that returns nonsense', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools] }),
        McpConsoleModule.forRoot({ guard: TestConsoleGuard, scope: () => ({ principalKeys: 'alice' }) as never }),
      ],
      providers: [FixtureTools],
    });
    const alice = await connect(server.baseUrl, 'token-alice');
    await alice.client.callTool({ name: 'echo', arguments: { text: 'hidden' } });
    await alice.client.close();
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('answers 500 naming the option, and shows no row', async () => {
    for (const path of ['/mcp-console', '/mcp-console/sessions', '/mcp-console/events', '/mcp-console/tasks']) {
      const page = await get(server.baseUrl, path);
      expect({ path, status: page.status }).toEqual({ path, status: 500 });
      expect(page.body).toContain(
        'the &quot;scope&quot; option returned an object without a principalKeys list of strings',
      );
      expect(page.body).not.toContain('data-event=');
      expect(page.body).not.toContain('data-session=');
    }
  });
});

describe('McpConsoleModule options are checked at boot', () => {
  it('refuses to mount without a guard, and names what to pass', () => {
    expect(() => McpConsoleModule.forRoot({})).toThrow(McpConfigurationError);
    expect(() => McpConsoleModule.forRoot({})).toThrow(/has no "guard" option/);
    expect(() => McpConsoleModule.forRoot({ guard: [] })).toThrow(/has no "guard" option/);
    expect(() => McpConsoleModule.forRootAsync({ useFactory: () => ({}) })).toThrow(/has no "guard" option/);
    expect(() => McpConsoleModule.forRoot({ guard: 'admin' as never })).toThrow(
      /"guard" must be a CanActivate class or instance/,
    );
    expect(() => McpConsoleModule.forRoot({ guard: TestConsoleGuard, path: 'bad path?' })).toThrow(
      /option "path" must be a URL path/,
    );
  });

  it('refuses bad option values and unknown keys when the app boots', async () => {
    const boot = (options: Record<string, unknown>) =>
      Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            type: 'better-sqlite3',
            database: ':memory:',
            entities: MCP_ENTITIES,
            synchronize: true,
          }),
          McpConsoleModule.forRoot({ guard: TestConsoleGuard, ...options }),
        ],
      })
        .compile()
        .then((m) => m.close());
    await expect(boot({ pageSize: 0 })).rejects.toThrow(/option "pageSize" must be a positive integer of at most 500/);
    await expect(boot({ pageSize: 2.5 })).rejects.toThrow(McpConfigurationError);
    await expect(boot({ idleTtlMs: -1 })).rejects.toThrow(/option "idleTtlMs"/);
    await expect(boot({ mount: '' })).rejects.toThrow(/option "mount" must be the name of a mount/);
    await expect(boot({ pagesize: 10 })).rejects.toThrow(/unknown option "pagesize" \(did you mean "pageSize"\?/);
    await expect(boot({ scope: 'alice' })).rejects.toThrow(
      /option "scope" must be a function \(request\) => 'all' \| \{ principalKeys: string\[\] \}, got string/,
    );
    await expect(boot({ pageSize: 10 })).resolves.toBeUndefined();
  });
});

describe('the audit console when the database does not answer (PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpConsoleModule.forRoot({ guard: TestConsoleGuard, timeoutMs: 300 })],
    });
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('answers 503 with Retry-After past timeoutMs, and serves again once the database does', async () => {
    const locker = db.dataSource.createQueryRunner();
    await locker.connect();
    try {
      await locker.startTransaction();
      await locker.query('LOCK TABLE mcp_events IN ACCESS EXCLUSIVE MODE');
      const stalled = await get(server.baseUrl, '/mcp-console/events');
      expect(stalled.status).toBe(503);
      expect(stalled.headers.get('retry-after')).toBe('5');
      expect(stalled.headers.get('cache-control')).toBe('no-store');
      expect(stalled.body).toContain('The database did not answer within 300 ms (console page)');
    } finally {
      await locker.rollbackTransaction();
      await locker.release();
    }
    const page = await get(server.baseUrl, '/mcp-console/events');
    expect(page.status).toBe(200);
    expect(page.body).toContain('No events match.');
  });
});
