import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { McpModule } from '../../src/mcp';
import { FeatureResources, ResourceChanges } from '../fixtures/features/feature-providers';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { SseReader } from '../fixtures/sse/sse-reader';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TEST_REDIS_URL as REDIS_URL } from '../support/redis';

const SECRET = 'replicas-stateless-shared-secret-01';

/**
 * Two replicas on one database and one Redis, sharing `stateless.requestStateSecret`: an
 * `input_required` round answered by replica A completes on replica B, and a resource change
 * announced on replica B reaches the GET stream of a session held by replica A.
 */
describe('Across replicas: input_required rounds and resource notifications', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const channelPrefix = `replicas-stateless-${randomBytes(6).toString('hex')}`;

  const boot = () =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [StatelessTools, FeatureResources],
          redis: REDIS_URL,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: SECRET },
        }),
      ],
      providers: [StatelessTools, FeatureResources, ResourceChanges],
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${channelPrefix}*`);
      if (keys.length) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  });

  it('2026-07-28: the first rounds answered by replica A, the retries sent to replica B, complete the call', async () => {
    const params = { name: 'interview', arguments: {} };
    const caps = { elicitation: {}, roots: {} };
    const first = await statelessPost(`${a.baseUrl}/mcp`, statelessRequest(1, 'tools/call', params, caps));
    expect(first.json.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicitation-1': { method: 'elicitation/create' } },
    });
    const second = await statelessPost(
      `${b.baseUrl}/mcp`,
      statelessRequest(
        2,
        'tools/call',
        {
          ...params,
          requestState: first.json.result.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Grace' } } },
        },
        caps,
      ),
    );
    expect(second.json.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicitation-2': { method: 'elicitation/create' } },
    });
    const third = await statelessPost(
      `${a.baseUrl}/mcp`,
      statelessRequest(
        3,
        'tools/call',
        {
          ...params,
          requestState: second.json.result.requestState,
          inputResponses: { 'elicitation-2': { action: 'accept', content: { name: 'Hopper' } } },
        },
        caps,
      ),
    );
    const [rootsKey, ...others] = Object.keys(third.json.result.inputRequests);
    expect(others).toEqual([]);
    expect(third.json.result.inputRequests[rootsKey]).toEqual({ method: 'roots/list', params: {} });
    const done = await statelessPost(
      `${b.baseUrl}/mcp`,
      statelessRequest(
        4,
        'tools/call',
        {
          ...params,
          requestState: third.json.result.requestState,
          inputResponses: { [rootsKey]: { roots: [{ uri: 'file:///b' }] } },
        },
        caps,
      ),
    );
    expect(done.status).toBe(200);
    expect(done.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Grace Hopper @ file:///b' }],
    });
  });

  it('a session subscribed through replica A gets notifications/resources/updated on its GET stream (held by A) when replica B announces the change', async () => {
    const url = `${a.baseUrl}/mcp`;
    const { sessionId } = await openSession(url);
    const subscribed = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'docs://readme' } },
      { sessionId, headers: versionHeader() },
    );
    expect(subscribed.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const reader = new SseReader(
      await fetch(url, {
        headers: {
          Authorization: 'Bearer token-alice',
          Accept: 'text/event-stream',
          'Mcp-Session-Id': sessionId,
          ...versionHeader(),
        },
      }),
    );
    try {
      expect((await reader.next())?.data).toBe('');
      const notified = await b.app.get(ResourceChanges).changed('docs://readme');
      expect(notified).toEqual([sessionId]);
      expect(JSON.parse((await reader.next())!.data)).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'docs://readme' },
      });
    } finally {
      await reader.cancel();
    }
  });
});
