import { Injectable, Logger } from '@nestjs/common';
import { McpModule, McpTool, type McpToolContext } from '../../src/mcp';
import { MCP_PUBSUB, type McpPubSub } from '../../src/mcp/server/pubsub/mcp-pubsub.providers';
import { McpListenStreams } from '../../src/mcp/server/stateless/listen-stream-registry';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { SseReader } from '../fixtures/sse/sse-reader';
import { routingHeaders, statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** Keys of the `wait_for_abort` calls whose signal fired. */
const aborted = new Set<string>();
const started = new Set<string>();

async function until(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

@Injectable()
class EdgeTools {
  @McpTool({ description: 'Reports two progress steps, then answers', input: { type: 'object', properties: {} } })
  async two_steps(_input: unknown, ctx: McpToolContext): Promise<string> {
    await ctx.progress(1, 2, 'one');
    await ctx.progress(2, 2, 'two');
    return 'stepped';
  }

  @McpTool({
    description: 'Waits until its request is cancelled',
    input: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  })
  async wait_for_abort({ key }: { key: string }, ctx: McpToolContext): Promise<string> {
    started.add(key);
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    aborted.add(key);
    return 'aborted';
  }
}

/**
 * 2026-07-28 edges of the stateless endpoint on a mount that serves tools only: progress on a
 * JSON-only request, a client that leaves mid-call, and listen streams when the server has no
 * resources to subscribe to or its channel carries foreign messages.
 */
describe('stateless endpoint edges (2026-07-28, tools only)', () => {
  let db: TestDatabase;
  let app: RunningApp;
  const readers: SseReader[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [EdgeTools] })],
      providers: [EdgeTools],
    });
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel()));
    await app?.close();
    await db?.drop();
  });

  const url = () => `${app.baseUrl}/mcp`;

  async function listen(id: number, notifications: unknown): Promise<SseReader> {
    const body = statelessRequest(id, 'subscriptions/listen', { notifications });
    const response = await fetch(url(), {
      method: 'POST',
      headers: {
        ...routingHeaders(body),
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        Authorization: 'Bearer token-alice',
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reader = new SseReader(response);
    readers.push(reader);
    return reader;
  }

  it('answers a JSON-only request with the plain result, dropping the progress it cannot stream', async () => {
    const body = statelessRequest(1, 'tools/call', {
      name: 'two_steps',
      arguments: {},
      _meta: { progressToken: 'p1' },
    });
    const reply = await statelessPost(url(), body, { headers: { Accept: 'application/json' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(reply.json).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'stepped' }], resultType: 'complete' },
    });
  });

  it('streams the progress first when the client accepts an event stream', async () => {
    const body = statelessRequest(2, 'tools/call', {
      name: 'two_steps',
      arguments: {},
      _meta: { progressToken: 'p2' },
    });
    const reply = await statelessPost(url(), body);
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    const messages = reply.text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(messages.map((message) => message.method ?? 'response')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'response',
    ]);
    expect(messages[2]).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'stepped' }] } });
  });

  it('aborts the running tool when the client closes the request', async () => {
    const controller = new AbortController();
    const body = statelessRequest(3, 'tools/call', { name: 'wait_for_abort', arguments: { key: 'left' } });
    const pending = fetch(url(), {
      method: 'POST',
      headers: {
        ...routingHeaders(body),
        'Content-Type': 'application/json',
        Accept: 'application/json',
        Authorization: 'Bearer token-alice',
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
    await until(() => started.has('left'), 'the tool started');
    controller.abort();
    expect(await pending).toBe('AbortError');
    await until(() => aborted.has('left'), 'the tool saw its signal abort');
  });

  it('acknowledges a listen filter without the resource subscriptions or list changes this server cannot honour', async () => {
    const reader = await listen(10, {
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: ['docs://readme'],
    });
    const ack = JSON.parse((await reader.next())!.data);
    // Tools always announce list changes (`McpRegistry`); this mount has no resources.
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID]: 10 } },
    });
    await reader.cancel();
  });

  it('ignores, with a warning, malformed and non-notification messages on its listen channel, and keeps the stream open', async () => {
    const streams = app.app.get(McpListenStreams, { strict: false });
    const pubsub = app.app.get<McpPubSub>(MCP_PUBSUB, { strict: false });
    const warned = jest.spyOn(Logger.prototype, 'warn');
    try {
      const reader = await listen(11, { toolsListChanged: true });
      expect(JSON.parse((await reader.next())!.data).method).toBe('notifications/subscriptions/acknowledged');
      expect(streams.size).toBe(1);
      await pubsub.publish('mcp:default:listen', '{not json');
      await pubsub.publish('mcp:default:listen', JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
      await until(() => warned.mock.calls.length >= 2, 'both messages were looked at');
      expect(warned.mock.calls.map(([message]) => message)).toEqual([
        'Ignored a listen message that is not JSON',
        'Ignored a malformed listen message',
      ]);
      expect(streams.size).toBe(1);
      await reader.cancel();
      await until(() => streams.size === 0, 'the stream closed');
    } finally {
      warned.mockRestore();
    }
  });
});
