import { randomBytes } from 'node:crypto';
import { McpModule, McpResourceNotifier } from '../../src/mcp';
import { McpListenStreams } from '../../src/mcp/server/stateless/listen-stream-registry';
import { FeatureResources } from '../fixtures/features/feature-providers';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest, routingHeaders } from '../fixtures/stateless/stateless-wire';
import { SseReader } from '../fixtures/sse/sse-reader';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** Opens a `subscriptions/listen` stream with the given filter; resolves once the head arrived. */
async function listen(url: string, id: number, notifications: unknown, accept = MCP_ACCEPT): Promise<Response> {
  const body = statelessRequest(id, 'subscriptions/listen', { notifications });
  return fetch(url, {
    method: 'POST',
    headers: {
      ...routingHeaders(body),
      'Content-Type': 'application/json',
      Accept: accept,
      Authorization: 'Bearer token-alice',
    },
    body: JSON.stringify(body),
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
async function nextMessage(reader: SseReader): Promise<any> {
  const event = await reader.next();
  if (!event) throw new Error('the listen stream ended');
  return JSON.parse(event.data);
}

/** Polls `check` until it holds, failing after a deadline (nothing here is timed otherwise). */
async function until(check: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * `subscriptions/listen` (2026-07-28) on two replicas sharing PostgreSQL and Redis: the
 * acknowledgment comes first, resource updates announced on either replica reach the stream
 * tagged with its subscription id, the filter is honoured, and closing the stream ends it.
 */
describe.each(HTTP_ADAPTERS)('subscriptions/listen streams (2026-07-28, %s)', (adapter) => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const channelPrefix = `listen-e2e-${randomBytes(6).toString('hex')}`;
  const readers: SseReader[] = [];

  const boot = () =>
    startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            redis: TEST_REDIS_URL,
            advanced: { pubsub: { channelPrefix } },
            stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
          }),
        ],
        providers: [FeatureResources],
      },
      adapter,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`);
    await db?.drop();
  });

  async function open(id: number, notifications: unknown): Promise<SseReader> {
    const response = await listen(`${a.baseUrl}/mcp`, id, notifications);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = new SseReader(response);
    readers.push(reader);
    return reader;
  }

  it('acknowledges first, with the part of the filter the server honours, and records one audit row', async () => {
    const reader = await open(101, {
      toolsListChanged: true,
      promptsListChanged: true,
      resourceSubscriptions: ['docs://readme', 'docs://unknown'],
      future: true,
    });
    expect(await nextMessage(reader)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: { toolsListChanged: true, resourceSubscriptions: ['docs://readme'] },
        _meta: { [SUBSCRIPTION_ID]: 101 },
      },
    });
    const rows = await db.dataSource.query(
      `SELECT method, status, error_code, session_ref, response->>'method' AS answered FROM mcp_events WHERE request->>'id' = '101'`,
    );
    expect(rows).toEqual([
      {
        method: 'subscriptions/listen',
        status: 200,
        error_code: null,
        session_ref: null,
        answered: 'notifications/subscriptions/acknowledged',
      },
    ]);
  });

  it('delivers resourceUpdated from the other replica, tagged, and only for the URIs of the filter', async () => {
    const reader = await open(102, { resourceSubscriptions: ['docs://readme'] });
    expect((await nextMessage(reader)).method).toBe('notifications/subscriptions/acknowledged');
    const notifier = b.app.get(McpResourceNotifier);
    await notifier.resourceUpdated('images://pixel.png');
    await notifier.resourceUpdated('docs://readme');
    expect(await nextMessage(reader)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'docs://readme', _meta: { [SUBSCRIPTION_ID]: 102 } },
    });
  });

  it('keeps concurrent subscriptions apart: each stream gets its own id and only what it asked for', async () => {
    const readme = await open(103, { resourceSubscriptions: ['docs://readme'] });
    const pixel = await open(104, { resourceSubscriptions: ['images://pixel.png'] });
    await nextMessage(readme);
    await nextMessage(pixel);
    await a.app.get(McpResourceNotifier).resourceUpdated('images://pixel.png');
    await a.app.get(McpResourceNotifier).resourceUpdated('docs://readme');
    expect((await nextMessage(pixel)).params).toEqual({ uri: 'images://pixel.png', _meta: { [SUBSCRIPTION_ID]: 104 } });
    expect((await nextMessage(readme)).params).toEqual({ uri: 'docs://readme', _meta: { [SUBSCRIPTION_ID]: 103 } });
  });

  it('ends the subscription when the client closes the stream', async () => {
    const streams = a.app.get(McpListenStreams);
    const before = streams.size;
    const reader = await open(105, {});
    expect(await nextMessage(reader)).toMatchObject({ params: { notifications: {} } });
    expect(streams.size).toBe(before + 1);
    await reader.cancel();
    await until(() => streams.size === before, 'the closed stream is forgotten');
  });

  it('refuses a request without a filter (-32602) or that does not accept an event stream (400, -32600)', async () => {
    const missing = await listen(`${a.baseUrl}/mcp`, 106, undefined);
    expect(await missing.json()).toMatchObject({ id: 106, error: { code: -32602 } });
    const badField = await listen(`${a.baseUrl}/mcp`, 107, { resourceSubscriptions: 'docs://readme' });
    expect(await badField.json()).toMatchObject({
      id: 107,
      error: { code: -32602, message: expect.stringContaining('resourceSubscriptions') },
    });
    const json = await listen(`${a.baseUrl}/mcp`, 108, {}, 'application/json');
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ id: 108, error: { code: -32600 } });
  });

  it('replaces resources/subscribe, which does not exist on 2026-07-28 (404, -32601)', async () => {
    const reply = await statelessPost(
      `${a.baseUrl}/mcp`,
      statelessRequest(109, 'resources/subscribe', { uri: 'docs://readme' }),
    );
    expect({ status: reply.status, code: reply.json.error.code }).toEqual({ status: 404, code: -32601 });
  });

  it('closes open streams gracefully at shutdown: a complete result tagged with the subscription id', async () => {
    const local = await startApp(
      db.url,
      { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FeatureResources] },
      adapter,
    );
    const response = await listen(`${local.baseUrl}/mcp`, 110, { resourceSubscriptions: ['docs://readme'] });
    const reader = new SseReader(response);
    expect((await nextMessage(reader)).method).toBe('notifications/subscriptions/acknowledged');
    await local.close();
    const rest = (await reader.rest()).map((event) => JSON.parse(event.data));
    expect(rest).toEqual([
      { jsonrpc: '2.0', id: 110, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: 110 } } },
    ]);
  });
});
