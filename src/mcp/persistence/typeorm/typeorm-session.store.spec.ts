import { DataSource } from 'typeorm';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_ENTITIES } from '../entities';
import { McpInboundSession } from '../entities/inbound-session.entity';
import type { McpInboundSessionRecord } from '../interfaces/mcp-session-store.interface';
import { TypeOrmSessionStore } from './typeorm-session.store';

const alice: McpPrincipal = { key: 'alice', label: 'alice', raw: null };
const IDLE_TTL_MS = 60_000; // touch interval: 1 s

/** `touch` on a real database (SQLite in memory): one UPDATE for many sessions, and only where it belongs. */
describe('TypeOrmSessionStore.touch', () => {
  let dataSource: DataSource;
  let store: TypeOrmSessionStore;
  /** The UPDATE statements sent while `recording`. */
  const updates: string[] = [];
  let recording = false;

  beforeAll(async () => {
    const quiet = () => undefined;
    const logger = {
      logQuery: (sql: string) => void (recording && /^UPDATE/i.test(sql) && updates.push(sql)),
      logQueryError: quiet,
      logQuerySlow: quiet,
      logSchemaBuild: quiet,
      logMigration: quiet,
      log: quiet,
    };
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
      logging: ['query'],
      logger,
    }).initialize();
    store = new TypeOrmSessionStore(dataSource.getRepository(McpInboundSession), {
      mount: 'default',
      idleTtlMs: IDLE_TTL_MS,
    });
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  /** The instant the touch happens at: the sessions' ages are measured from it, however long the setup takes. */
  let touchAt = Date.now();

  async function sessionSeen(msAgo: number, terminated = false): Promise<McpInboundSessionRecord> {
    const session = await store.open({
      principal: alice,
      protocolVersion: '2025-11-25',
      clientInfo: null,
      clientCapabilities: null,
    });
    await dataSource
      .getRepository(McpInboundSession)
      .update(
        { id: session.id },
        { lastSeenAt: new Date(touchAt - msAgo), terminatedAt: terminated ? new Date() : null },
      );
    return session;
  }

  const lastSeen = async (session: McpInboundSessionRecord) =>
    (await dataSource.getRepository(McpInboundSession).findOneByOrFail({ id: session.id })).lastSeenAt.getTime();

  it('refreshes stale live sessions in one statement, and leaves recent, terminated and idle ones alone', async () => {
    touchAt = Date.now();
    const stale = [await sessionSeen(5_000), await sessionSeen(30_000)];
    const recent = await sessionSeen(200);
    const ended = await sessionSeen(5_000, true);
    const idle = await sessionSeen(IDLE_TTL_MS + 5_000);
    const before = await Promise.all([recent, ended, idle].map(lastSeen));
    const seenAt = new Date(touchAt);
    recording = true;
    try {
      await store.touch([...stale, recent, ended, idle], seenAt);
    } finally {
      recording = false;
    }
    expect(updates).toHaveLength(1);
    expect(await Promise.all(stale.map(lastSeen))).toEqual([seenAt.getTime(), seenAt.getTime()]);
    expect(await Promise.all([recent, ended, idle].map(lastSeen))).toEqual(before);
    expect(await store.find(idle.sessionId, alice)).toBeNull();
  });

  it('does nothing for an empty list', async () => {
    await expect(store.touch([], new Date())).resolves.toBeUndefined();
  });
});
