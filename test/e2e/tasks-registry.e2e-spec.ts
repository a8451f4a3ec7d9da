import { randomBytes } from 'node:crypto';
import { McpModule, McpRegistry, type McpToolContext } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

const EXTENSION = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [EXTENSION]: {} } };
const JOB_INPUT = { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] };

/** Where each run of the runtime tool happened: `<replica>:<task|inline>:<label>`. */
const RUNS: string[] = [];

/**
 * Tools added with `McpRegistry.addTool` that run as tasks, on two replicas sharing PostgreSQL
 * and Redis: neither mount has a decorated task tool, so no task queue runs at boot; each replica
 * adds the same tool at run time (handlers are code, added on every replica), which starts its
 * task queue. A answers the calls and runs no task (`concurrency: 0`), B runs them.
 */
describe('runtime tools as tasks (McpRegistry, PostgreSQL + Redis, two replicas)', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `tasks-registry-e2e-${suffix}`;
  const queueName = `tasks-registry-e2e-${suffix}`;

  const boot = (concurrency: number) =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [],
          redis: TEST_REDIS_URL,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-registry-suite' },
          tasks: { concurrency, queueName, pollIntervalMs: 50 },
        }),
      ],
    });
  const registryOf = (app: RunningApp) => app.app.get(McpRegistry, { strict: false });
  const addJob = (app: RunningApp, replica: string) =>
    registryOf(app).addTool(
      {
        name: 'runtime_job',
        description: 'Added at run time; a task when the client allows',
        input: JOB_INPUT,
        task: 'optional',
      },
      async ({ label }: { label: string }, ctx: McpToolContext) => {
        RUNS.push(`${replica}:${ctx.task ? 'task' : 'inline'}:${label}`);
        await ctx.task?.update(`working on ${label}`);
        return `job ${label} done`;
      },
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot(0);
    b = await boot(2);
  });

  afterAll(async () => {
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${queueName}*`);
    await db?.drop();
  });

  let nextId = 1;
  const call = (
    app: RunningApp,
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = WITH_TASKS,
  ) => {
    const body = statelessRequest(nextId++, method, params, capabilities);
    const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {};
    return statelessPost(`${app.baseUrl}/mcp`, body, { token: 'token-alice', headers });
  };

  it('before any task tool the mount has no tasks extension and no tasks/get', async () => {
    expect((await call(a, 'server/discover', {})).json.result.capabilities.extensions).toBeUndefined();
    expect((await call(a, 'tasks/get', { taskId: 'none' })).json.error).toMatchObject({ code: -32601 });
  });

  it('a tool added on both replicas is published with execution.taskSupport, runs as a task created on A and run on B, and inline for a client without the extension', async () => {
    await addJob(a, 'A');
    await addJob(b, 'B');
    const listed = (await call(a, 'tools/list', {})).json.result.tools as Record<string, unknown>[];
    expect(listed.find((tool) => tool.name === 'runtime_job')).toMatchObject({
      execution: { taskSupport: 'optional' },
    });
    expect((await call(a, 'server/discover', {})).json.result.capabilities.extensions).toEqual({ [EXTENSION]: {} });

    const created = (await call(a, 'tools/call', { name: 'runtime_job', arguments: { label: 'r1' } })).json.result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const done = await pollUntil('the runtime task completed', async () => {
      const task = (await call(a, 'tasks/get', { taskId: created.taskId })).json.result;
      return task.status === 'completed' ? task : undefined;
    });
    expect(done).toMatchObject({
      statusMessage: 'working on r1',
      result: { content: [{ type: 'text', text: 'job r1 done' }] },
    });
    expect(RUNS.filter((run) => run.endsWith(':r1'))).toEqual(['B:task:r1']);

    const inline = (await call(a, 'tools/call', { name: 'runtime_job', arguments: { label: 'r2' } }, {})).json.result;
    expect(inline).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'job r2 done' }] });
    expect(RUNS.filter((run) => run.endsWith(':r2'))).toEqual(['A:inline:r2']);
  });

  it('refuses a bad task option of a runtime tool with McpConfigurationError', async () => {
    const registry = registryOf(a);
    await expect(
      registry.addTool({ name: 'bad_task', description: 'x', task: 'sometimes' as never }, () => 'x'),
    ).rejects.toThrow(`McpRegistry#addTool(bad_task): @McpTool option "task" is "sometimes"`);
    await expect(
      registry.addTool({ name: 'bad_before', description: 'x', inputBeforeTask: true }, () => 'x'),
    ).rejects.toThrow(`@McpTool option "inputBeforeTask" needs task: 'optional' or 'required'`);
    expect(
      ((await call(a, 'tools/list', {})).json.result.tools as { name: string }[]).map((tool) => tool.name),
    ).toEqual(['runtime_job']);
  });
});
