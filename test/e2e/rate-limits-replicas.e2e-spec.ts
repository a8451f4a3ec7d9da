import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { getMcpRegistryToken, McpModule, McpRegistry, McpTool } from '../../src/mcp';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type HttpAdapterName, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, versionHeader, type WireReply } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, listRedisKeys, TEST_REDIS_URL } from '../support/redis';

/** How often each tool's body ran, in both replicas together (they share this process). */
const runs = new Map<string, number>();
const ran = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);

/** A window no test outlives: nothing here waits for one to close. */
const WINDOW_MS = 600_000;

@Injectable()
class LimitedTools {
  @McpTool({ description: 'Searches, 5 calls per window per caller', rateLimit: { limit: 5, windowMs: WINDOW_MS } })
  search() {
    ran('search');
    return 'found';
  }

  @McpTool({
    description: 'Reports, 3 calls per window for all callers together',
    rateLimit: { limit: 3, windowMs: WINDOW_MS, per: 'mount' },
  })
  report() {
    ran('report');
    return 'reported';
  }

  @McpTool({ description: 'Looks up, 4 calls per window per caller', rateLimit: { limit: 4, windowMs: WINDOW_MS } })
  lookup() {
    ran('lookup');
    return 'looked up';
  }
}

@Injectable()
class BudgetTools {
  @McpTool({ description: 'One of the tools of the mount with a budget' })
  first() {
    ran('first');
    return 'first';
  }

  @McpTool({ description: 'Another one' })
  second() {
    ran('second');
    return 'second';
  }
}

/** A tool added at run time with a budget of its own, on every replica. */
@Injectable()
class RuntimeTools implements OnModuleInit {
  constructor(@Inject(getMcpRegistryToken('default')) private readonly registry: McpRegistry) {}

  async onModuleInit(): Promise<void> {
    await this.registry.addTool(
      { name: 'translate', description: 'Translates', rateLimit: { limit: 2, windowMs: WINDOW_MS } },
      () => (ran('translate'), 'translated'),
    );
  }
}

/**
 * Rate limits on two replicas sharing PostgreSQL and Redis (one on Express, one on Fastify, so
 * that every answer is checked on both adapters): the budgets hold for both replicas
 * together (counted in Redis), per principal or for the whole mount, on 2025 sessions and on the
 * 2026-07-28 stateless revision; a refused call answers 429 with -32000 and a retry hint, leaves
 * an audit row with a note, and never runs the tool.
 */
describe('Rate limits across replicas', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const channelPrefix = `rate-limits-${randomBytes(6).toString('hex')}`;
  const replica = (i: number) => (i % 2 === 0 ? a : b);

  const boot = (adapter: HttpAdapterName) =>
    startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({
            auth: (token: string) => (/^token-[a-z]+$/.test(token) ? token.slice('token-'.length) : null),
            providers: [LimitedTools],
            redis: TEST_REDIS_URL,
            advanced: { pubsub: { channelPrefix } },
            stateless: { requestStateSecret: 'rate-limits-replicas-shared-secret' },
          }),
          McpModule.forRoot({
            mount: 'budget',
            path: '/budget',
            auth: (token: string) => (/^token-[a-z]+$/.test(token) ? token.slice('token-'.length) : null),
            providers: [BudgetTools],
            redis: TEST_REDIS_URL,
            rateLimit: { limit: 4, windowMs: WINDOW_MS },
            advanced: { pubsub: { channelPrefix } },
            stateless: { requestStateSecret: 'rate-limits-replicas-shared-secret' },
          }),
        ],
        providers: [LimitedTools, BudgetTools, RuntimeTools],
      },
      adapter,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot('express');
    b = await boot('fastify');
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    await deleteRedisKeys(`${channelPrefix}:*`);
  });

  /** `count` calls of `tool` by `token`'s principal on a 2025 session, alternating between the replicas. */
  async function sessionCalls(tool: string, count: number, token: string, path = '/mcp'): Promise<WireReply[]> {
    const { sessionId } = await openSession(`${a.baseUrl}${path}`, token);
    const replies: WireReply[] = [];
    for (let i = 0; i < count; i++)
      replies.push(
        await post(`${replica(i).baseUrl}${path}`, callRequest(`${tool}-${token}-${i}`, tool), {
          token,
          sessionId,
          headers: versionHeader(),
        }),
      );
    return replies;
  }

  /** Checks one refusal as a client sees it, and returns its retry hint. */
  function expectRefused(reply: WireReply, data: Record<string, unknown>): number {
    expect(reply.status).toBe(429);
    expect(reply.json.error).toMatchObject({
      code: -32000,
      data: { limit: 'rateLimit', windowMs: WINDOW_MS, ...data },
    });
    expect(reply.json.error.message).toMatch(/^Rate limit exceeded: .*; retry in \d+ ms$/);
    const retryAfterMs = reply.json.error.data.retryAfterMs as number;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(WINDOW_MS);
    expect(reply.headers.get('retry-after')).toBe(String(Math.ceil(retryAfterMs / 1000)));
    return retryAfterMs;
  }

  async function auditRows(ids: string[]): Promise<Array<{ id: string; status: number; note: string | null }>> {
    return db.dataSource.query(
      `SELECT request->>'id' AS id, status, note FROM mcp_events WHERE request->>'id' = ANY($1) ORDER BY created_at, id`,
      [ids],
    );
  }

  it('limit 5 per caller, 8 calls alternating between the replicas: 5 run, 3 answer 429 with a retry hint and are audited with a note', async () => {
    const replies = await sessionCalls('search', 8, 'token-alice');
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    for (const reply of replies.slice(0, 5))
      expect(reply.json.result.content).toEqual([{ type: 'text', text: 'found' }]);
    for (const reply of replies.slice(5)) expectRefused(reply, { max: 5, tool: 'search' });
    expect(runs.get('search')).toBe(5);

    const ids = replies.map((_, i) => `search-token-alice-${i}`);
    const rows = await auditRows(ids);
    expect(rows.map((row) => row.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(rows.slice(0, 5).every((row) => row.note === null)).toBe(true);
    expect(rows.slice(5).map((row) => row.note)).toEqual(
      Array(3).fill('Refused: rateLimit of tool "search" (5 per 600000 ms per principal) reached'),
    );
  });

  it('another principal has a budget of its own, and tools/list is never counted', async () => {
    const { sessionId } = await openSession(`${b.baseUrl}/mcp`, 'token-bob');
    for (let i = 0; i < 6; i++) {
      const list = await post(
        `${replica(i).baseUrl}/mcp`,
        { jsonrpc: '2.0', id: `list-${i}`, method: 'tools/list' },
        { token: 'token-bob', sessionId, headers: versionHeader() },
      );
      expect(list.status).toBe(200);
    }
    const before = runs.get('search');
    const replies = await sessionCalls('search', 6, 'token-bob');
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(runs.get('search')).toBe((before ?? 0) + 5);
  });

  it("per: 'mount' is one budget for every caller of the tool", async () => {
    const alice = await sessionCalls('report', 2, 'token-alice');
    const carol = await sessionCalls('report', 2, 'token-carol');
    expect([...alice, ...carol].map((reply) => reply.status)).toEqual([200, 200, 200, 429]);
    expectRefused(carol[1], { max: 3, tool: 'report' });
    expect(runs.get('report')).toBe(3);
  });

  it("the mount's rateLimit counts every tool of the mount per caller", async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/budget`, 'token-dave');
    const replies: WireReply[] = [];
    for (let i = 0; i < 6; i++)
      replies.push(
        await post(`${replica(i).baseUrl}/budget`, callRequest(`budget-${i}`, i % 3 === 0 ? 'first' : 'second'), {
          token: 'token-dave',
          sessionId,
          headers: versionHeader(),
        }),
      );
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expectRefused(replies[4], { max: 4 });
    expect(replies[4].json.error.data).not.toHaveProperty('tool');
    expect((runs.get('first') ?? 0) + (runs.get('second') ?? 0)).toBe(4);
    const rows = await auditRows(['budget-4', 'budget-5']);
    expect(rows.map((row) => row.note)).toEqual(
      Array(2).fill('Refused: rateLimit (4 per 600000 ms per principal) reached'),
    );
  });

  it('2026-07-28 (stateless): the same budget across replicas, 429 with -32000 and Retry-After, audited, the tool not run', async () => {
    const replies: WireReply[] = [];
    for (let i = 0; i < 6; i++)
      replies.push(
        await statelessPost(
          `${replica(i).baseUrl}/mcp`,
          statelessRequest(`stateless-${i}`, 'tools/call', { name: 'lookup', arguments: {} }),
          { token: 'token-erin' },
        ),
      );
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(replies[0].json.result).toMatchObject({ content: [{ type: 'text', text: 'looked up' }] });
    expectRefused(replies[4], { max: 4, tool: 'lookup' });
    expect(runs.get('lookup')).toBe(4);
    const rows = await auditRows(['stateless-4', 'stateless-5']);
    expect(rows).toEqual([
      {
        id: 'stateless-4',
        status: 429,
        note: 'Refused: rateLimit of tool "lookup" (4 per 600000 ms per principal) reached',
      },
      {
        id: 'stateless-5',
        status: 429,
        note: 'Refused: rateLimit of tool "lookup" (4 per 600000 ms per principal) reached',
      },
    ]);
  });

  it('a tool added with McpRegistry.addTool keeps its rateLimit across replicas', async () => {
    const replies = await sessionCalls('translate', 3, 'token-frank');
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 429]);
    expect(runs.get('translate')).toBe(2);
  });

  it('leaves only expiring keys in Redis, none naming a principal', async () => {
    const keys = await listRedisKeys(`${channelPrefix}:*:rate:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => /alice|bob|carol|dave|erin|frank/.test(key))).toEqual([]);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      for (const key of keys) {
        const ttl = await redis.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(WINDOW_MS);
      }
    } finally {
      redis.disconnect();
    }
  });
});
