import { randomUUID } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import {
  MCP_CLIENT_RETENTION,
  MCP_ENTITIES,
  McpClientModule,
  McpModule,
  McpRetentionService,
  getMcpRetentionToken,
  type McpRetentionReport,
} from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { McpInboundSession, McpOutboundSession, McpResourceSubscription, McpTask } from '../../src/mcp/stores';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { openSession } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';
import { CapturingLogger } from '../support/capturing-logger';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Inserts `count` event rows created `ageMs` ago (minus a second per row) with one statement. */
async function insertEvents(
  dataSource: DataSource,
  count: number,
  ageMs: number,
  fields: { direction?: 'inbound' | 'outbound'; mount?: string | null; server?: string | null } = {},
): Promise<void> {
  const postgres = dataSource.options.type === 'postgres';
  const at = new Date(Date.now() - ageMs);
  if (postgres) {
    await dataSource.query(
      `INSERT INTO mcp_events (id, created_at, direction, mount, server, kind, method, request, response, status, is_error, duration_ms)
       SELECT gen_random_uuid()::text, $1::timestamp - g * interval '1 second', $2, $3, $4, 'request', 'tools/call', '{"jsonrpc":"2.0"}'::jsonb, '{"jsonrpc":"2.0"}'::jsonb, 200, false, 1
         FROM generate_series(1, $5::int) AS g`,
      [
        at,
        fields.direction ?? 'inbound',
        fields.mount === undefined ? 'default' : fields.mount,
        fields.server ?? null,
        count,
      ],
    );
    return;
  }
  const repository = dataSource.getRepository('McpEvent');
  for (let i = 0; i < count; i++) {
    await repository.insert({
      id: randomUUID(),
      createdAt: new Date(at.getTime() - (i + 1) * 1000),
      direction: fields.direction ?? 'inbound',
      mount: fields.mount === undefined ? 'default' : fields.mount,
      server: fields.server ?? null,
      kind: 'request',
      method: 'tools/call',
      request: { jsonrpc: '2.0' },
      response: { jsonrpc: '2.0' },
      status: 200,
      isError: false,
      durationMs: 1,
    });
  }
}

async function countEvents(dataSource: DataSource, where = 'TRUE'): Promise<number> {
  const rows: { n: string | number }[] = await dataSource.query(`SELECT count(*) AS n FROM mcp_events WHERE ${where}`);
  return Number(rows[0].n);
}

/** A session row as the store writes it; `ended`/`lastSeen` ages in ms (null: not ended). */
async function insertSession(
  dataSource: DataSource,
  mount: string,
  lastSeenAgeMs: number,
  endedAgeMs: number | null,
): Promise<string> {
  const sessionId = `s-${randomUUID()}`;
  const now = Date.now();
  await dataSource.getRepository(McpInboundSession).insert({
    id: randomUUID(),
    mount,
    sessionId,
    principalKey: 'alice',
    principalLabel: 'alice',
    protocolVersion: '2025-11-25',
    clientInfo: null,
    clientCapabilities: null,
    logLevel: null,
    createdAt: new Date(now - Math.max(lastSeenAgeMs, endedAgeMs ?? 0) - HOUR),
    lastSeenAt: new Date(now - lastSeenAgeMs),
    terminatedAt: endedAgeMs === null ? null : new Date(now - endedAgeMs),
  });
  await dataSource
    .getRepository(McpResourceSubscription)
    .insert({ id: randomUUID(), mount, sessionId, uri: 'fixture://watched', createdAt: new Date(now - lastSeenAgeMs) });
  return sessionId;
}

async function insertTask(dataSource: DataSource, mount: string, expiresInMs: number | null): Promise<string> {
  const id = `t-${randomUUID()}`;
  const now = Date.now();
  await dataSource.getRepository(McpTask).insert({
    id,
    mount,
    principalKey: 'alice',
    sessionId: null,
    toolName: 'echo',
    argumentsDigest: 'x'.repeat(64),
    payload: { arguments: {} } as never,
    status: 'completed',
    statusMessage: null,
    outcome: { result: { content: [] } },
    ttlMs: expiresInMs === null ? null : 60_000,
    pollIntervalMs: 1000,
    createdAt: new Date(now - 2 * HOUR),
    updatedAt: new Date(now - HOUR),
    expiresAt: expiresInMs === null ? null : new Date(now + expiresInMs),
    startedAt: null,
    worker: null,
    attempt: 1,
  });
  return id;
}

async function insertOutboundSession(dataSource: DataSource, server: string, updatedAgeMs: number): Promise<void> {
  const now = Date.now();
  await dataSource.getRepository(McpOutboundSession).insert({
    id: randomUUID(),
    server,
    scopeKey: '',
    remoteSessionId: 'remote',
    protocolVersion: '2025-11-25',
    serverInfo: null,
    serverCapabilities: null,
    endpoint: null,
    createdAt: new Date(now - updatedAgeMs - HOUR),
    updatedAt: new Date(now - updatedAgeMs),
    closedAt: null,
  });
}

describe('retention on PostgreSQL', () => {
  let db: TestDatabase;
  let app: RunningApp;
  let replica: RunningApp;
  let retention: McpRetentionService;
  let replicaRetention: McpRetentionService;
  let clientRetention: McpRetentionService;

  const mountRetention = { events: DAY, sessions: DAY, intervalMs: 10 * HOUR, batchSize: 100, batchPauseMs: 0 };

  beforeAll(async () => {
    db = await createTestDatabase();
    const imports = () => [
      McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools], retention: mountRetention }),
      McpModule.forRoot({ mount: 'plain', path: '/plain/mcp', auth: fixtureAuth, providers: [FixtureTools] }),
      McpClientModule.forRoot({
        servers: {},
        retention: { events: DAY, outboundSessions: DAY, intervalMs: 10 * HOUR, batchPauseMs: 0 },
      }),
    ];
    app = await startApp(db.url, { imports: imports(), providers: [FixtureTools] });
    replica = await startApp(db.url, { imports: imports(), providers: [FixtureTools] });
    retention = app.app.get(getMcpRetentionToken());
    replicaRetention = replica.app.get(getMcpRetentionToken());
    clientRetention = app.app.get(MCP_CLIENT_RETENTION);
  });

  afterAll(async () => {
    await app?.close();
    await replica?.close();
    await db?.drop();
  });

  beforeEach(async () => {
    await db.dataSource.query(`DELETE FROM mcp_events`);
  });

  it('deletes the old inbound events of its mount in bounded batches and keeps younger rows and other mounts', async () => {
    await insertEvents(db.dataSource, 1050, 2 * DAY);
    await insertEvents(db.dataSource, 30, HOUR);
    await insertEvents(db.dataSource, 20, 2 * DAY, { mount: 'plain' });
    await insertEvents(db.dataSource, 10, 2 * DAY, { direction: 'outbound', mount: null, server: 'remote' });

    const report = await retention.runOnce();

    expect(report.skipped).toBeUndefined();
    expect(report.tables.mcp_events).toEqual({ rows: 1050, batches: 11 });
    expect(await countEvents(db.dataSource, `mount = 'default'`)).toBe(30);
    expect(await countEvents(db.dataSource, `mount = 'plain'`)).toBe(20);
    expect(await countEvents(db.dataSource, `direction = 'outbound'`)).toBe(10);
    expect(retention.history().at(-1)).toBe(report);
  });

  it('deletes sessions ended or idle longer ago than the horizon with their subscriptions, never a live one', async () => {
    const live = await openSession(`${app.baseUrl}/mcp`);
    const endedLongAgo = await insertSession(db.dataSource, 'default', 3 * DAY, 2 * DAY);
    const endedRecently = await insertSession(db.dataSource, 'default', 2 * HOUR, HOUR);
    // Default idle TTL is one hour: last seen three days ago, idle since about two days and 23 hours.
    const idleLongAgo = await insertSession(db.dataSource, 'default', 3 * DAY, null);
    // Idle for one hour only: kept for the rest of the day.
    const idleRecently = await insertSession(db.dataSource, 'default', 2 * HOUR, null);
    const otherMount = await insertSession(db.dataSource, 'plain', 3 * DAY, 2 * DAY);

    const report = await retention.runOnce();

    expect(report.tables.mcp_inbound_sessions).toEqual({ rows: 2, batches: 1 });
    expect(report.tables.mcp_resource_subscriptions).toEqual({ rows: 2, batches: 1 });
    const sessions = (await db.dataSource.getRepository(McpInboundSession).find()).map((s) => s.sessionId).sort();
    expect(sessions).toEqual([live.sessionId, endedRecently, idleRecently, otherMount].sort());
    const subscribed = (await db.dataSource.getRepository(McpResourceSubscription).find())
      .map((s) => s.sessionId)
      .sort();
    expect(subscribed).toEqual([endedRecently, idleRecently, otherMount].sort());
    expect(sessions).not.toContain(endedLongAgo);
    expect(sessions).not.toContain(idleLongAgo);
  });

  it('deletes the tasks of its mount past their ttl, and only those', async () => {
    const expired = await insertTask(db.dataSource, 'default', -60_000);
    const running = await insertTask(db.dataSource, 'default', HOUR);
    const unlimited = await insertTask(db.dataSource, 'default', null);
    const elsewhere = await insertTask(db.dataSource, 'plain', -60_000);

    const report = await retention.runOnce();

    expect(report.tables.mcp_tasks).toEqual({ rows: 1, batches: 1 });
    const left = (await db.dataSource.getRepository(McpTask).find()).map((t) => t.id).sort();
    expect(left).toEqual([running, unlimited, elsewhere].sort());
    expect(left).not.toContain(expired);
  });

  it('the client deletes old outbound events and unused outbound sessions', async () => {
    await insertEvents(db.dataSource, 40, 2 * DAY, { direction: 'outbound', mount: null, server: 'remote' });
    await insertEvents(db.dataSource, 5, HOUR, { direction: 'outbound', mount: null, server: 'remote' });
    await insertEvents(db.dataSource, 7, 2 * DAY);
    await insertOutboundSession(db.dataSource, 'stale', 2 * DAY);
    await insertOutboundSession(db.dataSource, 'fresh', HOUR);

    const report = await clientRetention.runOnce();

    expect(report.scope).toBe('client');
    expect(report.tables.mcp_events).toEqual({ rows: 40, batches: 1 });
    expect(report.tables.mcp_outbound_sessions).toEqual({ rows: 1, batches: 1 });
    expect(await countEvents(db.dataSource, `direction = 'outbound'`)).toBe(5);
    expect(await countEvents(db.dataSource, `direction = 'inbound'`)).toBe(7);
    expect((await db.dataSource.getRepository(McpOutboundSession).find()).map((s) => s.server)).toEqual(['fresh']);
  });

  it('lets one replica prune at a time: the other skips while the lock is held', async () => {
    await insertEvents(db.dataSource, 300, 2 * DAY);
    // Hold one old row locked, so the first replica's run stops inside a batch while it holds the pruning lock.
    const blocker = new Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT id FROM mcp_events WHERE mount = 'default' FOR UPDATE`);
      const first = retention.runOnce();
      await pollUntil('the first replica waiting inside a batch', async () => {
        const rows: { n: string }[] = await db.dataSource.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "mcp_events"%'`,
        );
        return Number(rows[0].n) > 0 ? true : undefined;
      });
      const second = await replicaRetention.runOnce();
      expect(second.skipped).toBe('locked');
      expect(second.tables).toEqual({});
      await blocker.query('ROLLBACK');
      const report: McpRetentionReport = await first;
      expect(report.tables.mcp_events.rows).toBe(300);
    } finally {
      await blocker.end();
    }
    // The lock was released: the other replica runs now (and finds nothing left).
    const after = await replicaRetention.runOnce();
    expect(after.skipped).toBeUndefined();
    expect(after.tables.mcp_events).toEqual({ rows: 0, batches: 0 });
    expect(await countEvents(db.dataSource, `mount = 'default'`)).toBe(0);
  });

  it('is off by default: a mount without the option deletes nothing', async () => {
    await insertEvents(db.dataSource, 25, 30 * DAY, { mount: 'plain' });
    const plain = app.app.get<McpRetentionService>(getMcpRetentionToken('plain'));
    expect(plain.enabled).toBe(false);
    const report = await plain.runOnce();
    expect(report.skipped).toBe('off');
    expect(await countEvents(db.dataSource, `mount = 'plain'`)).toBe(25);
  });
});

describe('retention scheduled on Bull', () => {
  const mount = `ret${randomUUID().slice(0, 8)}`;
  let db: TestDatabase;
  let apps: RunningApp[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.drop();
    await deleteRedisKeys(`bull:mcp-retention-${mount}:*`, `bull:mcp-tasks-${mount}:*`);
  });

  it('registers one repeatable job for every replica and prunes on schedule', async () => {
    await insertEvents(db.dataSource, 120, 2 * DAY, { mount });
    const imports = () => [
      McpModule.forRoot({
        mount,
        path: '/r/mcp',
        auth: fixtureAuth,
        providers: [FixtureTools],
        redis: TEST_REDIS_URL,
        stateless: { requestStateSecret: 'a-shared-secret-of-the-retention-suite' },
        retention: { events: DAY, intervalMs: 300, batchSize: 50, batchPauseMs: 0 },
      }),
    ];
    apps = [
      await startApp(db.url, { imports: imports(), providers: [FixtureTools] }),
      await startApp(db.url, { imports: imports(), providers: [FixtureTools] }),
    ];
    const services = apps.map((app) => app.app.get<McpRetentionService>(getMcpRetentionToken(mount)));
    const deleted = () =>
      services
        .flatMap((service) => service.history())
        .reduce((sum, report) => sum + (report.tables.mcp_events?.rows ?? 0), 0);
    // A run's report is recorded when the run is over: wait for the reports, not only for the rows.
    await pollUntil('the reports of the scheduled runs that pruned the old rows', () =>
      deleted() >= 120 ? true : undefined,
    );
    expect(deleted()).toBe(120);
    expect(await countEvents(db.dataSource, `mount = '${mount}'`)).toBe(0);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Bull is loaded only by the one test that needs it
    const Bull = require('bull') as typeof import('bull');
    const queue = new Bull(`mcp-retention-${mount}`, TEST_REDIS_URL);
    try {
      const repeatable = await queue.getRepeatableJobs();
      expect(repeatable.map((job) => [job.id, Number(job.every)])).toEqual([['mcp-retention', 300]]);
    } finally {
      await queue.close();
    }
  });
});

describe('retention on SQLite (the example app path)', () => {
  it('prunes events, sessions with their subscriptions, tasks and outbound sessions', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: MCP_ENTITIES,
          synchronize: true,
        }),
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [FixtureTools],
          retention: { events: DAY, sessions: DAY, batchSize: 10, batchPauseMs: 0 },
        }),
        McpClientModule.forRoot({ servers: {}, retention: { events: DAY, outboundSessions: DAY } }),
      ],
      providers: [FixtureTools],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    await app.init();
    try {
      const dataSource = app.get(DataSource);
      await insertEvents(dataSource, 25, 2 * DAY);
      await insertEvents(dataSource, 3, HOUR);
      await insertEvents(dataSource, 4, 2 * DAY, { direction: 'outbound', mount: null, server: 'remote' });
      const gone = await insertSession(dataSource, 'default', 3 * DAY, 2 * DAY);
      const kept = await insertSession(dataSource, 'default', HOUR, null);
      await insertTask(dataSource, 'default', -1000);
      const task = await insertTask(dataSource, 'default', HOUR);
      await insertOutboundSession(dataSource, 'stale', 2 * DAY);

      const report = await app.get(McpRetentionService).runOnce();
      const client = await app.get<McpRetentionService>(MCP_CLIENT_RETENTION).runOnce();

      expect(report.tables).toEqual({
        mcp_events: { rows: 25, batches: 3 },
        mcp_inbound_sessions: { rows: 1, batches: 1 },
        mcp_resource_subscriptions: { rows: 1, batches: 1 },
        mcp_tasks: { rows: 1, batches: 1 },
      });
      expect(client.tables).toEqual({
        mcp_events: { rows: 4, batches: 1 },
        mcp_outbound_sessions: { rows: 1, batches: 1 },
      });
      expect(await countEvents(dataSource)).toBe(3);
      expect((await dataSource.getRepository(McpInboundSession).find()).map((s) => s.sessionId)).toEqual([kept]);
      expect((await dataSource.getRepository(McpResourceSubscription).find()).map((s) => s.sessionId)).toEqual([kept]);
      expect((await dataSource.getRepository(McpTask).find()).map((t) => t.id)).toEqual([task]);
      expect(gone).not.toBe(kept);
    } finally {
      await app.close();
    }
  });
});

describe('retention on a timer (no Redis)', () => {
  it('runs on its own every intervalMs and logs what each run deleted', async () => {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: MCP_ENTITIES,
          synchronize: true,
        }),
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [FixtureTools],
          retention: { events: DAY, intervalMs: 100, batchSize: 5, batchPauseMs: 0 },
        }),
      ],
      providers: [FixtureTools],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    await app.init();
    try {
      const dataSource = app.get(DataSource);
      await insertEvents(dataSource, 12, 2 * DAY);
      const service = app.get(McpRetentionService);
      const deleted = () => service.history().reduce((sum, report) => sum + (report.tables.mcp_events?.rows ?? 0), 0);
      await pollUntil('the reports of the scheduled runs that deleted the old rows', () =>
        deleted() >= 12 ? true : undefined,
      );
      expect(deleted()).toBe(12);
      expect(await countEvents(dataSource)).toBe(0);
      await pollUntil('the log line of that run', () =>
        logger.lines.some((line) => /Retention run deleted mcp_events: \d+ rows in \d+ batches/.test(line))
          ? true
          : undefined,
      );
      const logged = logger.lines.filter((line) => line.includes('Retention run deleted')).join('\n');
      expect(logged).toContain('McpRetention:mount:default');
    } finally {
      await app.close();
    }
  });
});

describe('retention options at boot', () => {
  async function boot(retention: unknown, client = false): Promise<unknown> {
    const moduleRef = Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: MCP_ENTITIES,
          synchronize: true,
        }),
        client
          ? McpClientModule.forRoot({ servers: {}, retention: retention as never })
          : McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools], retention: retention as never }),
      ],
      providers: [FixtureTools],
    });
    try {
      const compiled = await moduleRef.compile();
      await compiled.close();
      return null;
    } catch (error) {
      return error;
    }
  }

  it.each([
    [{ events: -1 }, 'option "retention.events" must be a positive whole number of milliseconds'],
    [{ events: '30d' }, 'option "retention.events" must be a positive whole number of milliseconds'],
    [{ sessions: 1.5 }, 'option "retention.sessions" must be a whole number of milliseconds, 0 or more'],
    [{ batchSize: 0 }, 'option "retention.batchSize" must be a positive whole number of rows'],
    [{ batchSize: 1_000_000 }, 'option "retention.batchSize" must be at most 50000'],
    [{ intervalMs: 0 }, 'option "retention.intervalMs" must be a positive whole number of milliseconds'],
    [{ evnts: DAY }, 'evnts'],
    [{ outboundSessions: DAY }, 'outboundSessions'],
    ['30 days', 'option "retention" must be an object'],
  ])('a mount refuses retention %j', async (retention, message) => {
    const error = await boot(retention);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toContain('McpModule (mount "default")');
    expect((error as Error).message).toContain(message);
  });

  it.each([
    [{ outboundSessions: 0 }, 'option "retention.outboundSessions" must be a positive whole number of milliseconds'],
    [{ sessions: DAY }, 'sessions'],
  ])('the client refuses retention %j', async (retention, message) => {
    const error = await boot(retention, true);
    expect(error).toBeInstanceOf(McpConfigurationError);
    expect((error as Error).message).toContain('McpClientModule');
    expect((error as Error).message).toContain(message);
  });
});
