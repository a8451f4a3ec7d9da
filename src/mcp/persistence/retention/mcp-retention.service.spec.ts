import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { MCP_ENTITIES } from '../entities';
import { McpEvent } from '../entities/mcp-event.entity';
import type { McpResolvedRetention } from './mcp-retention.options';
import { McpRetentionService, type McpRetentionSettings } from './mcp-retention.service';
import { pollUntil } from '../../../../test/support/polling';
import { PG_ADMIN_URL } from '../../../../test/support/postgres';
import { TEST_REDIS_URL, deleteRedisKeys } from '../../../../test/support/redis';
import { randomUUID } from 'node:crypto';

const retention: McpResolvedRetention = {
  events: 60_000,
  sessions: null,
  tasks: null,
  outboundSessions: null,
  intervalMs: 3_600_000,
  batchSize: 2,
  batchPauseMs: 0,
};

async function moduleRefWith(dataSource: DataSource | null): Promise<{ ref: ModuleRef; close: () => Promise<void> }> {
  const module = await Test.createTestingModule({
    providers: dataSource ? [{ provide: DataSource, useValue: dataSource }] : [],
  }).compile();
  return { ref: module.get(ModuleRef), close: () => module.close() };
}

function inboundEvent(id: string, createdAt: Date, mount = 'default') {
  return {
    id,
    createdAt,
    direction: 'inbound' as const,
    mount,
    server: null,
    kind: 'request',
    method: 'ping',
    durationMs: 1,
    isError: false,
  };
}

describe('McpRetentionService', () => {
  let dataSource: DataSource;
  let closeModule: () => Promise<void> = async () => undefined;
  const logs: string[] = [];

  beforeEach(async () => {
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    }).initialize();
    logs.length = 0;
    jest
      .spyOn(Logger.prototype, 'log')
      .mockImplementation((message: unknown) => void logs.push(`log ${String(message)}`));
    jest
      .spyOn(Logger.prototype, 'debug')
      .mockImplementation((message: unknown) => void logs.push(`debug ${String(message)}`));
    jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void logs.push(`error ${String(message)}`));
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await closeModule();
    closeModule = async () => undefined;
    if (dataSource.isInitialized) await dataSource.destroy();
  });

  async function service(
    settings: Partial<McpRetentionSettings> = {},
    withDataSource = true,
  ): Promise<McpRetentionService> {
    const { ref, close } = await moduleRefWith(withDataSource ? dataSource : null);
    closeModule = close;
    return new McpRetentionService(
      { scope: { kind: 'mount', mount: 'default', idleTtlMs: 60_000 }, retention, queue: null, ...settings },
      ref,
    );
  }

  it('is off without the option: no schedule, and runOnce reports "off" at the given time without touching the database', async () => {
    const off = await service({ retention: null }, false);
    expect(off.enabled).toBe(false);
    await off.onApplicationBootstrap();
    const at = new Date(Date.UTC(2026, 0, 1));
    await expect(off.runOnce(at)).resolves.toEqual({
      scope: 'mount:default',
      skipped: 'off',
      tables: {},
      partitionsDropped: [],
      partitionsCreated: [],
      startedAt: at,
      durationMs: 0,
    });
    expect((await off.runOnce()).startedAt).toBeInstanceOf(Date);
    expect(off.history()).toEqual([]);
    await off.onApplicationShutdown();
  });

  it('refuses to start without a DataSource, naming the mount or the client module', async () => {
    const mount = await service({ scope: { kind: 'mount', mount: 'tools', idleTtlMs: 1 } }, false);
    await expect(mount.onApplicationBootstrap()).rejects.toThrow(McpConfigurationError);
    expect(() => mount.runOnce()).toThrow('McpModule (mount "tools"): option "retention" needs the TypeORM DataSource');
    const client = await service({ scope: { kind: 'client' } }, false);
    expect(() => client.runOnce()).toThrow('McpClientModule: option "retention" needs the TypeORM DataSource');
  });

  it('deletes old inbound rows of its mount only, logs what it deleted, then logs that nothing was left', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 3_600_000);
    await dataSource
      .getRepository(McpEvent)
      .insert([
        inboundEvent('a', old),
        inboundEvent('b', old),
        inboundEvent('c', old),
        inboundEvent('d', now),
        inboundEvent('e', old, 'other'),
      ]);
    const pruner = await service();
    expect(pruner.enabled).toBe(true);
    const report = await pruner.runOnce(now);
    expect(report.skipped).toBeUndefined();
    expect(report.tables.mcp_events).toEqual({ rows: 3, batches: 2 });
    expect((await dataSource.getRepository(McpEvent).find({ order: { id: 'ASC' } })).map((e) => e.id)).toEqual([
      'd',
      'e',
    ]);
    expect(logs).toContainEqual(
      expect.stringMatching(/^log Retention run deleted mcp_events: 3 rows in 2 batches \(\d+ ms\)$/),
    );
    await pruner.runOnce(now);
    expect(logs).toContainEqual(expect.stringMatching(/^debug Retention run found nothing to delete/));
    expect(pruner.history()).toHaveLength(2);
  });

  it('joins a run under way instead of starting a second one, and keeps the latest 50 reports', async () => {
    const pruner = await service();
    const first = pruner.runOnce();
    expect(pruner.runOnce()).toBe(first);
    await first;
    for (let n = 0; n < 55; n++) await pruner.runOnce(new Date(n * 1000));
    const history = pruner.history();
    expect(history).toHaveLength(50);
    expect(history[0].startedAt).toEqual(new Date(5000));
    expect(history[49].startedAt).toEqual(new Date(54_000));
  });

  it('runs on its interval once the app is up, logs a failed run instead of throwing, and stops at shutdown', async () => {
    const pruner = await service({ retention: { ...retention, intervalMs: 20 } });
    await pruner.onApplicationBootstrap();
    await pollUntil('a scheduled run', () => (pruner.history().length > 0 ? true : undefined));
    await dataSource.destroy();
    await pollUntil('a failed run logged', () =>
      logs.some((l) => l.startsWith('error Retention run failed: ')) ? true : undefined,
    );
    await pruner.onApplicationShutdown();
    const runs = pruner.history().length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pruner.history()).toHaveLength(runs);
  });
});

describe('McpRetentionService on PostgreSQL with a Bull schedule', () => {
  const mount = `retention-spec-${randomUUID().slice(0, 8)}`;
  const prefix = `retention-service-spec-${mount}`;
  let dataSource: DataSource;
  let holder: DataSource;
  let close: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    dataSource = await new DataSource({ type: 'postgres', url: PG_ADMIN_URL }).initialize();
    holder = await new DataSource({ type: 'postgres', url: PG_ADMIN_URL }).initialize();
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await close();
    await dataSource.destroy();
    await holder.destroy();
    await deleteRedisKeys(`${prefix}:*`);
  });

  it('skips a run while another replica holds the pruning lock of the same mount, and starts its Bull schedule', async () => {
    const debug: string[] = [];
    jest.spyOn(Logger.prototype, 'debug').mockImplementation((message: unknown) => void debug.push(String(message)));
    const { ref, close: closeModule } = await moduleRefWith(dataSource);
    const none = { events: null, sessions: null, tasks: null, outboundSessions: null };
    const pruner = new McpRetentionService(
      {
        scope: { kind: 'mount', mount, idleTtlMs: 60_000 },
        retention: { ...retention, ...none },
        queue: { name: `retention-${mount}`, redis: TEST_REDIS_URL, options: { prefix } },
      },
      ref,
    );
    close = async () => {
      await pruner.onApplicationShutdown();
      await closeModule();
    };
    await pruner.onApplicationBootstrap();
    const runner = holder.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = await runner.query(`SELECT pg_try_advisory_lock(hashtext($1)::bigint) AS locked`, [
        `durable-mcp:retention:mount:${mount}`,
      ]);
      expect(locked).toBe(true);
      const report = await pruner.runOnce();
      expect(report.skipped).toBe('locked');
      expect(report.tables).toEqual({});
      expect(debug).toContain('Retention run skipped (locked)');
      await runner.query(`SELECT pg_advisory_unlock(hashtext($1)::bigint)`, [`durable-mcp:retention:mount:${mount}`]);
    } finally {
      await runner.release();
    }
  });
});
