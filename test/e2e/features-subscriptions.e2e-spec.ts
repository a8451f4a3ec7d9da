import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpModule, McpRegistry } from '../../src/mcp';
import { FeaturePrompts, FeatureResources, ResourceChanges } from '../fixtures/features/feature-providers';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { SseReader } from '../fixtures/sse/sse-reader';
import { startApp, type RunningApp } from '../support/http-app';
import { openSession, post, send, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Resource subscriptions kept in PostgreSQL and delivered on the session's GET stream, and how
 * the session-only methods behave on the stateless revision.
 */
describe('resource subscriptions and revision-specific feature methods (PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  let changes: ResourceChanges;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [FeatureResources, FeaturePrompts, ResourceChanges],
    });
    url = `${server.baseUrl}/mcp`;
    changes = server.app.get(ResourceChanges);
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function subscriptionsOf(sessionId: string): Promise<string[]> {
    const rows: { uri: string }[] = await db.dataSource.query(
      `SELECT uri FROM mcp_resource_subscriptions WHERE session_id = $1 ORDER BY uri`,
      [sessionId],
    );
    return rows.map((row) => row.uri);
  }

  function rpc(id: number, method: string, params: Record<string, unknown>) {
    return { jsonrpc: '2.0', id, method, params };
  }

  it('records subscribe and unsubscribe from the SDK client in the database, idempotently', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'subscriber', version: '1.0.0' });
    await client.connect(transport);
    const sessionId = transport.sessionId as string;

    await client.subscribeResource({ uri: 'docs://readme' });
    await client.subscribeResource({ uri: 'docs://readme' });
    await client.subscribeResource({ uri: 'users://alice/profile' });
    expect(await subscriptionsOf(sessionId)).toEqual(['docs://readme', 'users://alice/profile']);
    await expect(client.subscribeResource({ uri: 'docs://missing' })).rejects.toMatchObject({ code: -32002 });

    await client.unsubscribeResource({ uri: 'docs://readme' });
    await client.unsubscribeResource({ uri: 'docs://readme' });
    expect(await subscriptionsOf(sessionId)).toEqual(['users://alice/profile']);
    await client.close();
  });

  it('delivers notifications/resources/updated to live subscribers only, on their GET stream', async () => {
    const watcher = await openSession(url);
    const other = await openSession(url, 'token-bob');
    const ended = await openSession(url);
    const headers = versionHeader();
    for (const session of [watcher, other, ended]) {
      const reply = await post(url, rpc(1, 'resources/subscribe', { uri: 'images://pixel.png' }), {
        sessionId: session.sessionId,
        headers,
        token: session === other ? 'token-bob' : undefined,
      });
      expect(reply.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    }
    await post(url, rpc(2, 'resources/unsubscribe', { uri: 'images://pixel.png' }), {
      sessionId: other.sessionId,
      headers,
      token: 'token-bob',
    });
    expect((await send(url, 'DELETE', { sessionId: ended.sessionId })).status).toBe(204);

    const stream = await fetch(url, {
      headers: {
        Authorization: 'Bearer token-alice',
        Accept: 'text/event-stream',
        'Mcp-Session-Id': watcher.sessionId,
        ...headers,
      },
    });
    expect(stream.status).toBe(200);
    const reader = new SseReader(stream);
    expect((await reader.next())?.data).toBe('');

    expect(await changes.changed('images://pixel.png')).toEqual([watcher.sessionId]);
    const event = await reader.next();
    expect(JSON.parse(event!.data)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'images://pixel.png' },
    });
    expect(await changes.changed('docs://readme')).toEqual([]);
    expect((await send(url, 'DELETE', { sessionId: watcher.sessionId })).status).toBe(204);
    expect(await reader.next()).toBeNull();
    expect(await changes.changed('images://pixel.png')).toEqual([]);
  });

  it('stops announcing a resource switched off for the session principal (or for everyone) or removed after it subscribed, and resumes once it is on again', async () => {
    const registry = server.app.get(McpRegistry);
    await registry.addResource({ uri: 'notes://runtime', name: 'runtime-notes' }, () => 'notes');
    const alice = await openSession(url);
    const bob = await openSession(url, 'token-bob');
    const headers = versionHeader();
    const tokenOf = (session: typeof alice) => (session === bob ? 'token-bob' : 'token-alice');
    for (const session of [alice, bob]) {
      for (const [index, uri] of ['docs://readme', 'images://pixel.png', 'notes://runtime'].entries()) {
        const reply = await post(url, rpc(10 + index, 'resources/subscribe', { uri }), {
          sessionId: session.sessionId,
          headers,
          token: tokenOf(session),
        });
        expect(reply.json).toEqual({ jsonrpc: '2.0', id: 10 + index, result: {} });
      }
    }
    const streamOf = async (session: typeof alice): Promise<SseReader> => {
      const response = await fetch(url, {
        headers: {
          Authorization: `Bearer ${tokenOf(session)}`,
          Accept: 'text/event-stream',
          'Mcp-Session-Id': session.sessionId,
          ...headers,
        },
      });
      expect(response.status).toBe(200);
      const reader = new SseReader(response);
      expect((await reader.next())?.data).toBe('');
      return reader;
    };
    const aliceStream = await streamOf(alice);
    const bobStream = await streamOf(bob);
    const next = async (reader: SseReader) => JSON.parse((await reader.next())!.data);
    const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    const listChanged = { jsonrpc: '2.0', method: 'notifications/resources/list_changed' };
    const both = [alice.sessionId, bob.sessionId].sort();
    try {
      // Switched off for alice only: her stream skips it (the later marker comes first), bob's does not.
      await registry.disable('resource', 'docs://readme', { principals: ['alice'] });
      expect([await next(aliceStream), await next(bobStream)]).toEqual([listChanged, listChanged]);
      expect(await changes.changed('docs://readme')).toEqual([bob.sessionId]);
      expect((await changes.changed('images://pixel.png')).sort()).toEqual(both);
      expect(await next(aliceStream)).toEqual(updated('images://pixel.png'));
      expect([await next(bobStream), await next(bobStream)]).toEqual([
        updated('docs://readme'),
        updated('images://pixel.png'),
      ]);

      // Switched off for everyone: no session hears of it.
      await registry.disable('resource', 'docs://readme');
      expect([await next(aliceStream), await next(bobStream)]).toEqual([listChanged, listChanged]);
      expect(await changes.changed('docs://readme')).toEqual([]);
      expect((await changes.changed('images://pixel.png')).sort()).toEqual(both);
      expect([await next(aliceStream), await next(bobStream)]).toEqual([
        updated('images://pixel.png'),
        updated('images://pixel.png'),
      ]);

      // On again: the subscriptions stayed, so both hear of it.
      await registry.enable('resource', 'docs://readme');
      expect([await next(aliceStream), await next(bobStream)]).toEqual([listChanged, listChanged]);
      expect((await changes.changed('docs://readme')).sort()).toEqual(both);
      expect([await next(aliceStream), await next(bobStream)]).toEqual([
        updated('docs://readme'),
        updated('docs://readme'),
      ]);
      expect(await subscriptionsOf(alice.sessionId)).toEqual([
        'docs://readme',
        'images://pixel.png',
        'notes://runtime',
      ]);

      // A resource removed since the subscription is not announced either.
      expect(await registry.removeResource('notes://runtime')).toBe(true);
      expect([await next(aliceStream), await next(bobStream)]).toEqual([listChanged, listChanged]);
      expect(await changes.changed('notes://runtime')).toEqual([]);
      expect((await changes.changed('images://pixel.png')).sort()).toEqual(both);
      expect([await next(aliceStream), await next(bobStream)]).toEqual([
        updated('images://pixel.png'),
        updated('images://pixel.png'),
      ]);
    } finally {
      await registry.enable('resource', 'docs://readme');
      await registry.removeResource('notes://runtime');
      for (const session of [alice, bob])
        await send(url, 'DELETE', { sessionId: session.sessionId, token: tokenOf(session) });
      await Promise.all([aliceStream.cancel(), bobStream.cancel()]);
    }
  });

  it('keeps subscribe and setLevel to sessions: unknown methods on 2026-07-28, where not-found is -32602', async () => {
    const subscribe = await statelessPost(url, statelessRequest(1, 'resources/subscribe', { uri: 'docs://readme' }));
    expect(subscribe.json.error.code).toBe(-32601);
    const setLevel = await statelessPost(url, statelessRequest(2, 'logging/setLevel', { level: 'debug' }));
    expect(setLevel.json.error.code).toBe(-32601);
    const missing = await statelessPost(url, statelessRequest(3, 'resources/read', { uri: 'docs://missing' }));
    expect(missing.json.error).toMatchObject({ code: -32602, data: { uri: 'docs://missing' } });
    const read = await statelessPost(url, statelessRequest(4, 'resources/read', { uri: 'users://bob/profile' }));
    expect(JSON.parse(read.json.result.contents[0].text)).toEqual({ id: 'bob', name: 'Bob', viewer: 'alice' });
    const prompt = await statelessPost(
      url,
      statelessRequest(5, 'prompts/get', { name: 'code_review', arguments: { code: 'x' } }),
    );
    expect(prompt.json.result.messages[0].content.text).toBe('Please review this code:\nx');
  });
});
