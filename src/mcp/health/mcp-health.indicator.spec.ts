import type { ModuleRef } from '@nestjs/core';
import { HealthIndicatorService } from '@nestjs/terminus';
import { getDataSourceToken } from '@nestjs/typeorm';
import { McpCallQueueHost } from '../client/queue/mcp-call-queue-host';
import { McpTransportRegistry } from '../client/transports/transport-registry';
import { StdioTransport } from '../client/transports/stdio/stdio.transport';
import { getMcpOptionsToken, getMcpTaskServiceToken } from '../mcp.constants';
import { MCP_EVENT_SINK } from '../persistence/mcp-persistence.constants';
import { MCP_PUBSUB } from '../server/pubsub/mcp-pubsub.providers';
import type { McpDrainService } from '../server/shutdown/mcp-drain.service';
import { McpHealthIndicator } from './mcp-health.indicator';
import type { McpResolvedHealthOptions } from './mcp-health.options';

const options: McpResolvedHealthOptions = {
  path: false,
  mount: 'default',
  databaseTimeoutMs: 50,
  queue: { minWorkers: 1, maxWaitingAgeMs: 1000 },
  tasks: { minWorkers: 1, maxWaitingAgeMs: 1000, timeoutMs: 50 },
  audit: { maxBacklog: 10 },
  stdio: { stuckMs: 1000 },
  minIntervalMs: 0,
};

/** An indicator over an app whose providers are `providers` (a fake ModuleRef of our collaborators). */
function indicator(
  providers: Map<unknown, unknown>,
  drain: Partial<McpDrainService> = {},
  opts: McpResolvedHealthOptions = options,
): McpHealthIndicator {
  const moduleRef = {
    get: (token: unknown) => {
      if (!providers.has(token)) throw new Error('not found');
      return providers.get(token);
    },
  } as unknown as ModuleRef;
  const drainService = {
    status: () => ({ draining: false, since: null, inFlight: 0 }),
    mountNames: () => [],
    ...drain,
  } as unknown as McpDrainService;
  return new McpHealthIndicator(new HealthIndicatorService(), opts, drainService, moduleRef);
}

describe('McpHealthIndicator', () => {
  it('database: up with configured false without a DataSource, down when not initialized, down on a query past the deadline', async () => {
    expect(await indicator(new Map()).database()).toEqual({ database: { status: 'up', configured: false } });
    const notInit = new Map<unknown, unknown>([
      [getDataSourceToken(), { isInitialized: false, options: { type: 'postgres' } }],
    ]);
    const down = await indicator(notInit).database();
    expect(down.database.status).toBe('down');
    expect(down.database.message).toMatch(/not initialized/);
    const hanging = new Map<unknown, unknown>([
      [
        getDataSourceToken(),
        { isInitialized: true, options: { type: 'postgres' }, query: () => new Promise(() => undefined) },
      ],
    ]);
    const timedOut = await indicator(hanging).database();
    expect(timedOut.database).toMatchObject({ status: 'down', type: 'postgres', timeoutMs: 50 });
  });

  it('redis: configured false without a bus, down when not listening, down with the redacted error when PING fails', async () => {
    expect(await indicator(new Map()).redis()).toEqual({ redis: { status: 'up', configured: false } });
    const deaf = new Map<unknown, unknown>([[MCP_PUBSUB, { ping: async () => ({ latencyMs: 1, listening: false }) }]]);
    expect((await indicator(deaf).redis()).redis).toMatchObject({ status: 'down', listening: false });
    const failing = new Map<unknown, unknown>([
      [
        MCP_PUBSUB,
        {
          listening: true,
          ping: async () => {
            throw new Error('connect ECONNREFUSED');
          },
        },
      ],
    ]);
    expect((await indicator(failing).redis()).redis).toMatchObject({
      status: 'down',
      listening: true,
      message: expect.stringContaining('ECONNREFUSED'),
    });
    const noFlag = new Map<unknown, unknown>([
      [
        MCP_PUBSUB,
        {
          ping: async () => {
            throw new Error('boom');
          },
        },
      ],
    ]);
    expect((await indicator(noFlag).redis()).redis).toMatchObject({ status: 'down', listening: false });
  });

  it('queue: configured false without a client, down on too few workers, an old waiting call, or stats failing', async () => {
    expect(await indicator(new Map()).queue()).toEqual({ queue: { status: 'up', configured: false } });
    const host = (stats: () => Promise<unknown>) =>
      new Map<unknown, unknown>([[McpCallQueueHost, { queue: { mode: 'bull', stats } }]]);
    expect((await indicator(host(async () => ({ workers: 0, oldestWaitingMs: null }))).queue()).queue).toMatchObject({
      status: 'down',
      message: expect.stringContaining('fewer than 1'),
    });
    expect((await indicator(host(async () => ({ workers: 2, oldestWaitingMs: 5000 }))).queue()).queue).toMatchObject({
      status: 'down',
      message: expect.stringContaining('5000 ms'),
    });
    expect((await indicator(host(async () => ({ workers: 2, oldestWaitingMs: 10 }))).queue()).queue.status).toBe('up');
    expect(
      (
        await indicator(
          host(async () => {
            throw new Error('redis gone');
          }),
        ).queue()
      ).queue,
    ).toMatchObject({ status: 'down', mode: 'bull', message: expect.stringContaining('redis gone') });
  });

  it('tasks: down per mount on worker shortage, an old task, a failing or silent queue; up when all are fine', async () => {
    const svc = (queueStats: () => Promise<unknown>) => ({ queueStarted: true, queueStats });
    const providers = new Map<unknown, unknown>([
      [getMcpTaskServiceToken('a'), svc(async () => ({ workers: 0, oldestWaitingMs: null }))],
      [getMcpTaskServiceToken('b'), svc(async () => ({ workers: 1, oldestWaitingMs: 9999 }))],
      [
        getMcpTaskServiceToken('c'),
        svc(async () => {
          throw new Error('nope');
        }),
      ],
      [getMcpTaskServiceToken('d'), svc(() => new Promise(() => undefined))],
      [getMcpTaskServiceToken('e'), svc(async () => ({ workers: 1, oldestWaitingMs: null }))],
      [getMcpTaskServiceToken('f'), { queueStarted: false }],
    ]);
    const mcp = indicator(providers, { mountNames: () => ['a', 'b', 'c', 'd', 'e', 'f', 'g'] });
    const result = (await mcp.tasks()).tasks;
    expect(result.status).toBe('down');
    expect(Object.keys(result.mounts).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(result.message).toContain('mount "a": 0 worker(s)');
    expect(result.message).toContain('mount "b": the oldest waiting task has waited 9999 ms');
    expect(result.message).toContain('mount "c": the task queue cannot be read: nope');
    expect(result.message).toContain('mount "d": the task queue cannot be read: Redis did not answer within 50 ms');
    expect(result.message).not.toContain('mount "e"');
    expect(mcp.readiness()).toHaveLength(4);
    const healthy = indicator(
      new Map<unknown, unknown>([[getMcpTaskServiceToken('e'), providers.get(getMcpTaskServiceToken('e'))]]),
      { mountNames: () => ['e'] },
    );
    expect((await healthy.tasks()).tasks.status).toBe('up');
  });

  it('audit: null backlog without a sink, down above the maximum; draining: down with the start time while shutting down', async () => {
    expect(await indicator(new Map()).audit()).toEqual({ audit: { status: 'up', backlog: null } });
    expect(
      (await indicator(new Map<unknown, unknown>([[MCP_EVENT_SINK, { backlog: 11 }]])).audit()).audit,
    ).toMatchObject({ status: 'down', backlog: 11, maxBacklog: 10 });
    expect((await indicator(new Map<unknown, unknown>([[MCP_EVENT_SINK, { backlog: 10 }]])).audit()).audit.status).toBe(
      'up',
    );
    const since = new Date('2026-01-01T00:00:00Z');
    const draining = indicator(new Map(), { status: () => ({ draining: true, since, inFlight: 2 }) });
    expect(draining.draining().shutdown).toMatchObject({ status: 'down', since: since.toISOString(), inFlight: 2 });
    const noSince = indicator(new Map(), { status: () => ({ draining: true, since: null, inFlight: 0 }) });
    expect(noSince.draining().shutdown).toMatchObject({ status: 'down', since: null });
  });

  it('database: up with the latency; the deadline comes from the mount when the health options give none', async () => {
    const ok = new Map<unknown, unknown>([
      [getDataSourceToken(), { isInitialized: true, options: { type: 'sqlite' }, query: async () => [{ 1: 1 }] }],
    ]);
    expect((await indicator(ok).database('db')).db).toMatchObject({ status: 'up', type: 'sqlite' });
    const hanging = { isInitialized: true, options: { type: 'postgres' }, query: () => new Promise(() => undefined) };
    const fromMount = new Map<unknown, unknown>([
      [getDataSourceToken(), hanging],
      [getMcpOptionsToken('default'), { database: { timeoutMs: 30 } }],
    ]);
    expect((await indicator(fromMount, {}, { ...options, databaseTimeoutMs: null }).database()).database).toMatchObject(
      { status: 'down', timeoutMs: 30 },
    );
  });

  it('readiness lists the checks of what the app has; live reports this process', () => {
    expect(indicator(new Map()).readiness()).toHaveLength(3);
    const full = new Map<unknown, unknown>([
      [MCP_PUBSUB, { ping: async () => ({ latencyMs: 1, listening: true }) }],
      [McpCallQueueHost, { queue: {} }],
    ]);
    expect(indicator(full).readiness()).toHaveLength(6);
    expect(indicator(new Map()).live()).toEqual({
      process: { status: 'up', pid: process.pid, uptimeSeconds: expect.any(Number) },
    });
  });

  it('stdio: up with no registry, down naming a pool whose oldest waiting call is older than stuckMs', async () => {
    expect(await indicator(new Map()).stdio()).toEqual({ stdio: { status: 'up', servers: {} } });
    const transport = (stats: unknown) =>
      Object.assign(Object.create(StdioTransport.prototype) as StdioTransport, { stats: () => stats });
    const registry = {
      opened: () => [
        ['stuck', transport({ pool: { waiting: 2, oldestWaitingMs: 5000 } })],
        ['busy', transport({ pool: { waiting: 1, oldestWaitingMs: 10 } })],
        ['idle', transport({ pool: null })],
        ['http', { stats: () => ({}) }],
      ],
    };
    const result = (await indicator(new Map<unknown, unknown>([[McpTransportRegistry, registry]])).stdio()).stdio;
    expect(result).toMatchObject({ status: 'down', stuck: ['stuck'] });
    expect(Object.keys(result.servers).sort()).toEqual(['busy', 'idle', 'stuck']);
  });
});
