import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { McpModule } from '../../src/mcp';
import { FeaturePrompts, FeatureResources, LANGUAGES, PIXEL_PNG } from '../fixtures/features/feature-providers';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Resources, templates, prompts, completion and logging of a booted app on PostgreSQL, as the
 * official SDK 1.x client sees them (2025-11-25 session).
 */
describe('server features through the official SDK 1.x client (2025-11-25, PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, advanced: { pageSize: 2 } })],
      providers: [FeatureResources, FeaturePrompts],
    });
    transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    client = new Client({ name: 'features-e2e', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await db?.drop();
  });

  it('announces resources (with subscribe), prompts, completions and logging', () => {
    expect(client.getServerCapabilities()).toMatchObject({
      tools: {},
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
    });
  });

  it('lists resources page by page with opaque cursors, and the templates', async () => {
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(['docs://readme', 'images://pixel.png']);
    expect(first.resources[0]).toEqual({
      uri: 'docs://readme',
      name: 'readme',
      title: 'Read me',
      description: 'The project read-me',
      mimeType: 'text/markdown',
    });
    expect(first.resources[1].annotations).toEqual({ audience: ['user'], priority: 0.5 });
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.resources.map((r) => r.uri)).toEqual(['docs://broken', 'docs://forbidden']);
    expect(second.nextCursor).toBeUndefined();
    await expect(client.listResources({ cursor: 'not-ours' })).rejects.toMatchObject({ code: -32602 });

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      {
        uriTemplate: 'users://{id}/profile',
        name: 'profile',
        description: 'A user profile',
        mimeType: 'application/json',
      },
    ]);
  });

  it('reads text, blob and templated resources (with decoded parameters and the caller in the context)', async () => {
    expect((await client.readResource({ uri: 'docs://readme' })).contents).toEqual([
      { uri: 'docs://readme', mimeType: 'text/markdown', text: '# durable-mcp\n' },
    ]);
    const pixel = await client.readResource({ uri: 'images://pixel.png' });
    expect(pixel.contents).toEqual([
      { uri: 'images://pixel.png', mimeType: 'image/png', blob: PIXEL_PNG.toString('base64') },
    ]);
    const profile = await client.readResource({ uri: 'users://ann%20marie/profile' });
    expect(profile.contents).toHaveLength(1);
    expect(profile.contents[0]).toMatchObject({ uri: 'users://ann%20marie/profile', mimeType: 'application/json' });
    expect(JSON.parse((profile.contents[0] as { text: string }).text)).toEqual({
      id: 'ann marie',
      name: 'Ann Marie',
      viewer: 'alice',
    });
  });

  it('answers unknown resources with -32002 and handler failures with their message or code', async () => {
    await expect(client.readResource({ uri: 'docs://missing' })).rejects.toMatchObject({
      code: -32002,
      data: { uri: 'docs://missing' },
    });
    await expect(client.readResource({ uri: 'users://nobody/profile' })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'users://a/b/profile' })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'docs://broken' })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('the disk is on fire'),
    });
    await expect(client.readResource({ uri: 'docs://forbidden' })).rejects.toMatchObject({
      code: -32001,
      message: expect.stringContaining('not for you'),
    });
  });

  it('lists prompts with their arguments, in pages', async () => {
    const first = await client.listPrompts();
    expect(first.prompts[0]).toEqual({
      name: 'code_review',
      title: 'Code review',
      description: 'Asks for a review of some code',
      arguments: [
        { name: 'code', description: 'The code to review', required: true },
        { name: 'language', description: 'Its language' },
        { name: 'framework', description: 'Its framework' },
      ],
    });
    const rest = await client.listPrompts({ cursor: first.nextCursor });
    const names = [...first.prompts, ...rest.prompts].map((p) => p.name);
    expect(names).toEqual(['code_review', 'show_pixel', 'translate', 'exploding']);
    expect(rest.prompts.find((p) => p.name === 'translate')?.arguments).toEqual([
      { name: 'text', required: true },
      { name: 'target', required: false },
    ]);
  });

  it('gets prompts with text, image and embedded-resource messages', async () => {
    const review = await client.getPrompt({ name: 'code_review', arguments: { code: 'print(1)', language: 'python' } });
    expect(review).toEqual({
      description: 'Asks for a review of some code',
      messages: [
        { role: 'user', content: { type: 'text', text: 'Please review this python:\nprint(1)' } },
        { role: 'assistant', content: { type: 'text', text: 'Sure, reading it now.' } },
      ],
    });
    const shown = await client.getPrompt({ name: 'show_pixel' });
    expect(shown.description).toBe('An image and a document');
    expect(shown.messages.map((m) => m.content)).toEqual([
      { type: 'image', data: PIXEL_PNG.toString('base64'), mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'docs://readme', mimeType: 'text/markdown', text: '# durable-mcp\n' } },
    ]);
    const translated = await client.getPrompt({ name: 'translate', arguments: { text: 'hello', target: 'German' } });
    expect(translated.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Translate to German (dto): hello' } },
    ]);
  });

  it('answers a missing required argument, an unknown prompt and a failing prompt with JSON-RPC errors', async () => {
    await expect(client.getPrompt({ name: 'code_review', arguments: { language: 'python' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('missing required argument: code'),
    });
    await expect(client.getPrompt({ name: 'translate', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('text'),
    });
    await expect(client.getPrompt({ name: 'nope' })).rejects.toMatchObject({ code: -32602 });
    await expect(client.getPrompt({ name: 'exploding' })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('prompt exploded'),
    });
  });

  it('completes prompt arguments (at most 100, with total and hasMore, context passed through)', async () => {
    const py = await client.complete({
      ref: { type: 'ref/prompt', name: 'code_review' },
      argument: { name: 'language', value: 'py' },
    });
    expect(py.completion).toEqual({ values: ['python', 'pytorch', 'pyside'], total: 3, hasMore: false });
    const all = await client.complete({
      ref: { type: 'ref/prompt', name: 'code_review' },
      argument: { name: 'language', value: '' },
    });
    expect(all.completion.values).toEqual(LANGUAGES.slice(0, 100));
    expect(all.completion).toMatchObject({ total: LANGUAGES.length, hasMore: true });
    const framework = await client.complete({
      ref: { type: 'ref/prompt', name: 'code_review' },
      argument: { name: 'framework', value: 'f' },
      context: { arguments: { language: 'python' } },
    });
    expect(framework.completion.values).toEqual(['flask', 'fastapi']);
    const none = await client.complete({
      ref: { type: 'ref/prompt', name: 'code_review' },
      argument: { name: 'code', value: 'x' },
    });
    expect(none.completion.values).toEqual([]);
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: '' } }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('completes resource template parameters', async () => {
    const ids = await client.complete({
      ref: { type: 'ref/resource', uri: 'users://{id}/profile' },
      argument: { name: 'id', value: 'al' },
    });
    expect(ids.completion).toEqual({ values: ['alice', 'albert'], total: 2, hasMore: false });
    await expect(
      client.complete({ ref: { type: 'ref/resource', uri: 'users://{nope}' }, argument: { name: 'nope', value: '' } }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('stores logging/setLevel on the session row and sends only the enabled levels', async () => {
    const received: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      received.push(notification.params);
    });
    await client.setLoggingLevel('error');
    const [row] = await db.dataSource.query(`SELECT log_level FROM mcp_inbound_sessions WHERE session_id = $1`, [
      transport.sessionId,
    ]);
    expect(row.log_level).toBe('error');

    expect((await client.callTool({ name: 'log_every_level', arguments: {} })).content).toEqual([
      { type: 'text', text: 'logged' },
    ]);
    expect(received).toEqual(
      ['error', 'critical', 'alert', 'emergency'].map((level) => ({ level, logger: 'fixture', data: `at ${level}` })),
    );

    received.length = 0;
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'log_every_level', arguments: {} });
    expect(received.map((message) => message.level)).toEqual([
      'debug',
      'info',
      'notice',
      'warning',
      'error',
      'critical',
      'alert',
      'emergency',
    ]);
    await expect(client.setLoggingLevel('loud' as never)).rejects.toMatchObject({ code: -32602 });
  });
});
