import { Injectable } from '@nestjs/common';
import {
  getMcpResourceNotifierToken,
  McpModule,
  McpResource,
  McpResourceNotifier,
  McpTool,
  type McpAuthResult,
  type McpToolContext,
} from '../../src/mcp';
import { routingHeaders, statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { SseReader } from '../fixtures/sse/sse-reader';
import { TaskGates } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, TEST_PROTOCOL_VERSION, post, versionHeader } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const PEOPLE: Record<string, McpAuthResult> = {
  'token-alice': { key: 'alice', label: 'Alice' },
  'token-bob': { key: 'bob', label: 'Bob' },
};
const auth = (token: string) => PEOPLE[token] ?? null;

const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const NOT_FOUND = { code: -32602, message: 'Failed to retrieve task: Task not found' };
const GATE_INPUT = { type: 'object', properties: { gate: { type: 'string' } }, required: ['gate'] } as const;
const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

@Injectable()
class AnonymousTaskTools {
  @McpTool({
    description: 'Waits on a gate, then answers its secret',
    input: GATE_INPUT,
    task: 'optional',
    public: true,
  })
  async slow({ gate }: { gate: string }, ctx: McpToolContext): Promise<string> {
    await ctx.task?.update('waiting');
    await TaskGates.gate(gate);
    return `the secret of ${gate}`;
  }

  @McpTool({ description: 'Asks its caller for a name, as a task', input: GATE_INPUT, task: 'optional', public: true })
  async ask({ gate }: { gate: string }, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit(`Name for ${gate}?`, NAME_SCHEMA);
    return `${gate}: ${answer.action} ${String(answer.content?.name)}`;
  }

  @McpResource({ uri: 'board://news', name: 'news', mimeType: 'text/plain', public: true })
  news() {
    return 'nothing new';
  }
}

/**
 * Tasks on an `anonymous: true` mount: every caller without a token is the one `anonymous`
 * principal, so an anonymous task is bound to the session that created it (2025-11-25) or to its
 * own id (2026-07-28); `limits.tasksPerPrincipal` caps the tasks a principal has running.
 */
describe('anonymous tasks and the per-principal task cap (real app, PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  let capped: string;
  const readers: SseReader[] = [];
  let nextId = 1;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth,
          anonymous: true,
          providers: [AnonymousTaskTools],
          tasks: { pollIntervalMs: 50, resultTimeoutMs: 3_000 },
        }),
        McpModule.forRoot({
          mount: 'capped',
          path: '/capped/mcp',
          auth,
          anonymous: true,
          providers: [AnonymousTaskTools],
          tasks: { pollIntervalMs: 50 },
          advanced: { limits: { tasksPerPrincipal: 2 } },
        }),
      ],
      providers: [AnonymousTaskTools],
    });
    url = `${server.baseUrl}/mcp`;
    capped = `${server.baseUrl}/capped/mcp`;
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    await server?.close();
    await db?.drop();
  });

  /** A 2025-11-25 session, anonymous (token null) or not, declaring elicitation. */
  async function session(at: string, token: string | null): Promise<string> {
    const init = await post(
      at,
      {
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: {
          protocolVersion: TEST_PROTOCOL_VERSION,
          capabilities: { elicitation: {} },
          clientInfo: { name: 'anon-tasks', version: '1.0.0' },
        },
      },
      { token },
    );
    expect(init.status).toBe(200);
    const sessionId = init.headers.get('mcp-session-id') as string;
    await post(
      at,
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { token, sessionId, headers: versionHeader() },
    );
    return sessionId;
  }
  /** One request in a 2025 session, answered as JSON (no event stream). */
  const inSession = (
    at: string,
    sessionId: string,
    method: string,
    params: Record<string, unknown>,
    token: string | null = null,
  ) =>
    post(
      at,
      { jsonrpc: '2.0', id: nextId++, method, params },
      { token, sessionId, headers: { ...versionHeader(), Accept: MCP_ACCEPT } },
    );
  const createInSession = async (
    at: string,
    sessionId: string,
    name: string,
    gate: string,
    token: string | null = null,
  ) => {
    const reply = await inSession(
      at,
      sessionId,
      'tools/call',
      { name, arguments: { gate }, task: { ttl: 60_000 } },
      token,
    );
    expect(reply.status).toBe(200);
    return (reply.json.result.task as { taskId: string }).taskId;
  };
  /** One stateless (2026-07-28) request, without a token unless given one. */
  const stateless = (
    at: string,
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = WITH_TASKS,
    token: string | null = null,
  ) => {
    const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {};
    return statelessPost(at, statelessRequest(nextId++, method, params, capabilities), { token, headers });
  };
  const listedIds = async (at: string, sessionId: string, token: string | null = null) => {
    const reply = await inSession(at, sessionId, 'tasks/list', {}, token);
    expect(reply.status).toBe(200);
    return (reply.json.result.tasks as { taskId: string }[]).map((task) => task.taskId);
  };

  describe('an anonymous caller sees, reads, cancels and answers only the tasks it created', () => {
    it('2025-11-25: another anonymous session neither lists, reads, waits on, nor cancels a session’s task', async () => {
      const mine = await session(url, null);
      const stranger = await session(url, null);
      const finished = await createInSession(url, mine, 'slow', 'anon-finished');
      const running = await createInSession(url, mine, 'slow', 'anon-running');
      TaskGates.open('anon-finished');
      await pollUntil('the first task completed', async () =>
        (await inSession(url, mine, 'tasks/get', { taskId: finished })).json.result.status === 'completed'
          ? true
          : undefined,
      );

      expect((await listedIds(url, mine)).sort()).toEqual([finished, running].sort());
      expect(await listedIds(url, stranger)).toEqual([]);
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        for (const taskId of [finished, running]) {
          const reply = await inSession(url, stranger, method, { taskId });
          expect({ method, status: reply.status, error: reply.json.error, result: reply.json.result }).toEqual({
            method,
            status: 200,
            error: NOT_FOUND,
            result: undefined,
          });
        }
      }
      // The owner's session still has both, untouched.
      expect((await inSession(url, mine, 'tasks/result', { taskId: finished })).json.result.content).toEqual([
        { type: 'text', text: 'the secret of anon-finished' },
      ]);
      expect((await inSession(url, mine, 'tasks/get', { taskId: running })).json.result).toMatchObject({
        taskId: running,
        status: 'working',
      });
      expect((await inSession(url, mine, 'tasks/cancel', { taskId: running })).json.result).toMatchObject({
        taskId: running,
        status: 'cancelled',
      });
      TaskGates.open('anon-running');
    });

    it('2025-11-25: tasks/result from another anonymous session does not receive the elicitation a session’s task is waiting on', async () => {
      const mine = await session(url, null);
      const stranger = await session(url, null);
      const taskId = await createInSession(url, mine, 'ask', 'anon-ask');
      await pollUntil('the task asks its input', async () =>
        (await inSession(url, mine, 'tasks/get', { taskId })).json.result.status === 'input_required'
          ? true
          : undefined,
      );
      const intruder = await post(
        url,
        { jsonrpc: '2.0', id: 'intruder-result', method: 'tasks/result', params: { taskId } },
        { token: null, sessionId: stranger, headers: versionHeader() },
      );
      expect({ status: intruder.status, type: intruder.headers.get('content-type'), body: intruder.json }).toEqual({
        status: 200,
        type: expect.stringContaining('application/json'),
        body: { jsonrpc: '2.0', id: 'intruder-result', error: NOT_FOUND },
      });
      expect(intruder.text).not.toContain('Name for anon-ask');
      expect((await inSession(url, mine, 'tasks/cancel', { taskId })).json.result).toMatchObject({
        status: 'cancelled',
      });
    });

    it('2026-07-28: a request without a session reaches no session’s task, nor may it answer its input; its own tasks are reached by id and listed to nobody', async () => {
      const mine = await session(url, null);
      const sessionTask = await createInSession(url, mine, 'ask', 'anon-ask-26');
      await pollUntil('the session task asks its input', async () =>
        (await inSession(url, mine, 'tasks/get', { taskId: sessionTask })).json.result.status === 'input_required'
          ? true
          : undefined,
      );
      for (const method of ['tasks/get', 'tasks/cancel']) {
        const reply = await stateless(url, method, { taskId: sessionTask });
        expect({ method, error: reply.json.error }).toEqual({ method, error: NOT_FOUND });
      }
      const update = await stateless(url, 'tasks/update', {
        taskId: sessionTask,
        inputResponses: { elicitation: { action: 'accept', content: { name: 'Mallory' } } },
      });
      expect(update.json.error).toEqual(NOT_FOUND);
      expect((await inSession(url, mine, 'tasks/get', { taskId: sessionTask })).json.result).toMatchObject({
        status: 'input_required',
      });

      // A stateless anonymous task: its id is its handle; no session lists or reads it.
      const created = await stateless(url, 'tools/call', { name: 'slow', arguments: { gate: 'anon-26' } });
      expect(created.json.result).toMatchObject({ resultType: 'task', status: 'working' });
      const own: string = created.json.result.taskId;
      expect((await stateless(url, 'tasks/get', { taskId: own })).json.result).toMatchObject({
        taskId: own,
        status: 'working',
      });
      expect(await listedIds(url, mine)).toEqual([sessionTask]);
      expect((await inSession(url, mine, 'tasks/get', { taskId: own })).json.error).toEqual(NOT_FOUND);
      expect((await inSession(url, mine, 'tasks/cancel', { taskId: own })).json.error).toEqual(NOT_FOUND);
      expect((await stateless(url, 'tasks/cancel', { taskId: own })).json.result).toMatchObject({
        resultType: 'complete',
      });
      expect((await stateless(url, 'tasks/get', { taskId: own })).json.result).toMatchObject({ status: 'cancelled' });
      expect((await inSession(url, mine, 'tasks/cancel', { taskId: sessionTask })).json.result).toMatchObject({
        status: 'cancelled',
      });
      TaskGates.open('anon-26');
    });

    it('2026-07-28: a listen stream without a token agrees to the sessionless anonymous tasks it names, never to a session’s', async () => {
      const mine = await session(url, null);
      const sessionTask = await createInSession(url, mine, 'slow', 'anon-listen-session');
      const own: string = (await stateless(url, 'tools/call', { name: 'slow', arguments: { gate: 'anon-listen-own' } }))
        .json.result.taskId;
      const body = statelessRequest(
        nextId++,
        'subscriptions/listen',
        { notifications: { taskIds: [sessionTask, own, 'no-such-task'] } },
        WITH_TASKS,
      );
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...routingHeaders(body), 'Content-Type': 'application/json', Accept: MCP_ACCEPT },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      const reader = new SseReader(response);
      readers.push(reader);
      const ack = JSON.parse((await reader.next())!.data);
      expect(ack.params.notifications).toEqual({ taskIds: [own] });
      await reader.cancel();
      TaskGates.open('anon-listen-session');
      TaskGates.open('anon-listen-own');
    });

    it('a signed-in principal still lists its tasks of every session and reads them without one', async () => {
      const first = await session(url, 'token-alice');
      const second = await session(url, 'token-alice');
      const a = await createInSession(url, first, 'slow', 'alice-1', 'token-alice');
      const b = await createInSession(url, second, 'slow', 'alice-2', 'token-alice');
      expect((await listedIds(url, second, 'token-alice')).sort()).toEqual([a, b].sort());
      expect((await stateless(url, 'tasks/get', { taskId: a }, WITH_TASKS, 'token-alice')).json.result).toMatchObject({
        taskId: a,
      });
      expect((await stateless(url, 'tasks/get', { taskId: a }, WITH_TASKS, 'token-bob')).json.error).toEqual(NOT_FOUND);
      TaskGates.open('alice-1');
      TaskGates.open('alice-2');
    });
  });

  describe('what else anonymous sessions do not share', () => {
    it('an elicitation a session’s call waits on is not answered by another anonymous session', async () => {
      const mine = await session(url, null);
      const stranger = await session(url, null);
      const call = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: MCP_ACCEPT, 'Mcp-Session-Id': mine, ...versionHeader() },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'inline-ask',
          method: 'tools/call',
          params: { name: 'ask', arguments: { gate: 'inline' } },
        }),
      });
      const reader = new SseReader(call);
      readers.push(reader);
      let request: { id: string | number; method: string } | undefined;
      while (!request) {
        const event = await reader.next();
        if (!event) throw new Error('the call ended before asking');
        if (event.data) request = JSON.parse(event.data);
      }
      expect(request.method).toBe('elicitation/create');
      const forged = await post(
        url,
        { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name: 'Mallory' } } },
        { token: null, sessionId: stranger, headers: versionHeader() },
      );
      expect(forged.status).toBe(202);
      const answered = await post(
        url,
        { jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { name: 'Ada' } } },
        { token: null, sessionId: mine, headers: versionHeader() },
      );
      expect(answered.status).toBe(202);
      const results = (await reader.rest()).filter((event) => event.data).map((event) => JSON.parse(event.data));
      expect(results).toEqual([
        { jsonrpc: '2.0', id: 'inline-ask', result: { content: [{ type: 'text', text: 'inline: accept Ada' }] } },
      ]);
    });

    it('a resource subscription belongs to its session: another anonymous session neither receives its updates nor removes it', async () => {
      const notifier = server.app.get<McpResourceNotifier>(getMcpResourceNotifierToken());
      const mine = await session(url, null);
      const stranger = await session(url, null);
      expect((await inSession(url, mine, 'resources/subscribe', { uri: 'board://news' })).json.result).toEqual({});
      expect((await inSession(url, stranger, 'resources/unsubscribe', { uri: 'board://news' })).json.result).toEqual(
        {},
      );
      expect(await notifier.resourceUpdated('board://news')).toEqual([mine]);
    });
  });

  describe('limits.tasksPerPrincipal', () => {
    const taskRows = async (principal: string) =>
      Number(
        (
          await db.dataSource.query(
            `SELECT count(*) AS n FROM mcp_tasks WHERE mount = 'capped' AND principal_key = $1`,
            [principal],
          )
        )[0].n,
      );

    it('2025-11-25: a task beyond the cap answers 429 with -32000, creates no row, is audited, and leaves other principals alone', async () => {
      const alice = await session(capped, 'token-alice');
      await createInSession(capped, alice, 'slow', 'cap-25-1', 'token-alice');
      await createInSession(capped, alice, 'slow', 'cap-25-2', 'token-alice');
      const refused = await post(
        capped,
        {
          jsonrpc: '2.0',
          id: 'over-the-cap',
          method: 'tools/call',
          params: { name: 'slow', arguments: { gate: 'cap-25-3' }, task: {} },
        },
        { token: 'token-alice', sessionId: alice, headers: versionHeader() },
      );
      expect({ status: refused.status, body: refused.json }).toEqual({
        status: 429,
        body: {
          jsonrpc: '2.0',
          id: 'over-the-cap',
          error: {
            code: -32000,
            message: expect.stringContaining('Too many tasks: this principal already has 2 tasks that are not over'),
            data: { limit: 'tasksPerPrincipal', max: 2 },
          },
        },
      });
      expect(await taskRows('alice')).toBe(2);
      const audit = await db.dataSource.query(
        `SELECT principal_key, status, error_code, note FROM mcp_events WHERE mount = 'capped' AND request->>'id' = 'over-the-cap'`,
      );
      expect(audit).toEqual([
        {
          principal_key: 'alice',
          status: 429,
          error_code: -32000,
          note: 'Refused: limits.tasksPerPrincipal (2) reached',
        },
      ]);

      const bob = await session(capped, 'token-bob');
      await createInSession(capped, bob, 'slow', 'cap-25-bob', 'token-bob');
      // A task that is over no longer counts.
      TaskGates.open('cap-25-1');
      await pollUntil('a task of alice completed', async () =>
        Number(
          (
            await db.dataSource.query(
              `SELECT count(*) AS n FROM mcp_tasks WHERE mount = 'capped' AND principal_key = 'alice' AND status = 'completed'`,
            )
          )[0].n,
        ) === 1
          ? true
          : undefined,
      );
      await createInSession(capped, alice, 'slow', 'cap-25-3', 'token-alice');
      expect(await taskRows('alice')).toBe(3);
      for (const gate of ['cap-25-2', 'cap-25-3', 'cap-25-bob']) TaskGates.open(gate);
      await pollUntil('every task of the test is over', async () =>
        Number(
          (
            await db.dataSource.query(
              `SELECT count(*) AS n FROM mcp_tasks WHERE mount = 'capped' AND status = 'working'`,
            )
          )[0].n,
        ) === 0
          ? true
          : undefined,
      );
    });

    it('2026-07-28: a task beyond the cap answers 429 with -32000; all anonymous callers share one count', async () => {
      // Two anonymous sessions and a stateless caller: one principal, one count.
      const first = await session(capped, null);
      const second = await session(capped, null);
      await createInSession(capped, first, 'slow', 'cap-anon-1');
      await createInSession(capped, second, 'slow', 'cap-anon-2');
      const refused = await stateless(capped, 'tools/call', { name: 'slow', arguments: { gate: 'cap-anon-3' } });
      expect({ status: refused.status, error: refused.json.error }).toEqual({
        status: 429,
        error: {
          code: -32000,
          message: expect.stringContaining('Too many tasks'),
          data: { limit: 'tasksPerPrincipal', max: 2 },
        },
      });
      const inSecond = await inSession(capped, second, 'tools/call', {
        name: 'slow',
        arguments: { gate: 'cap-anon-3' },
        task: {},
      });
      expect({ status: inSecond.status, code: inSecond.json.error?.code }).toEqual({ status: 429, code: -32000 });
      expect(await taskRows('anonymous')).toBe(2);
      const [audit] = await db.dataSource.query(
        `SELECT principal_key, status, error_code, note FROM mcp_events WHERE mount = 'capped' AND request->>'id' = $1`,
        [String(refused.json.id)],
      );
      expect(audit).toEqual({
        principal_key: 'anonymous',
        status: 429,
        error_code: -32000,
        note: 'Refused: limits.tasksPerPrincipal (2) reached',
      });
      TaskGates.open('cap-anon-1');
      TaskGates.open('cap-anon-2');
      await pollUntil('the anonymous tasks are over', async () =>
        Number(
          (
            await db.dataSource.query(
              `SELECT count(*) AS n FROM mcp_tasks WHERE mount = 'capped' AND status = 'working'`,
            )
          )[0].n,
        ) === 0
          ? true
          : undefined,
      );
      const accepted = await stateless(capped, 'tools/call', { name: 'slow', arguments: { gate: 'cap-anon-4' } });
      expect({ status: accepted.status, resultType: accepted.json.result?.resultType }).toEqual({
        status: 200,
        resultType: 'task',
      });
      TaskGates.open('cap-anon-4');
    });
  });
});
