import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpRpcError } from '../../src/mcp/errors/mcp-rpc.errors';
import type { JsonRpcRequest } from '../../src/mcp/protocol/jsonrpc';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import {
  call,
  context,
  everythingServer,
  filesystemServer,
  isAlive,
  pidRecorder,
  request,
  toolCall,
  waitUntil,
} from '../fixtures/stdio/stdio-test-kit';

const SAMPLING_RESULT = {
  role: 'assistant',
  content: { type: 'text', text: 'fixed sampled answer' },
  model: 'test-model',
  stopReason: 'endTurn',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
function texts(result: Record<string, any>): string {
  return (result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('\n');
}

describe('StdioTransport against @modelcontextprotocol/server-everything (spawn per call)', () => {
  const spawned = pidRecorder();
  const transport = new StdioTransport({ command: everythingServer(), onSpawn: spawned.onSpawn });

  afterAll(async () => {
    await transport.close();
    expect(spawned.pids.filter(isAlive)).toEqual([]);
  });

  it('lists tools, prompts and resources, and reports the handshake and stderr', async () => {
    const tools = await call(transport, request('tools/list'));
    const names = (tools.result.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(tools.delivery.handshake).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'mcp-servers/everything' },
      capabilities: { tools: expect.any(Object), prompts: expect.any(Object), resources: expect.any(Object) },
    });
    expect(tools.delivery.handshake?.instructions).toEqual(expect.any(String));
    expect(tools.delivery.stderr).toContain('Starting default (STDIO) server');
    expect(tools.delivery).toMatchObject({ sessionId: null, status: null });
    expect(JSON.parse(tools.delivery.rawResponse as string)).toEqual(tools.delivery.body);

    const prompts = await call(transport, request('prompts/list'));
    expect((prompts.result.prompts as Array<{ name: string }>).map((p) => p.name)).toEqual([
      'simple-prompt',
      'args-prompt',
      'completable-prompt',
      'resource-prompt',
    ]);

    const resources = await call(transport, request('resources/list'));
    expect(resources.result.resources).toHaveLength(7);
    // Each process is shut down after its result was returned.
    await waitUntil(() => spawned.pids.filter(isAlive).length === 0, 15_000, 'every spawned server to be shut down');
  });

  it('calls echo and get-sum', async () => {
    const echo = await call(transport, toolCall('echo', { message: 'héllo ✓ 日本' }));
    expect(echo.result.content).toEqual([{ type: 'text', text: 'Echo: héllo ✓ 日本' }]);
    const sum = await call(transport, toolCall('get-sum', { a: 2, b: 40 }));
    expect(texts(sum.result)).toContain('42');
  });

  it('answers the sampling request of trigger-sampling-request through onServerRequest', async () => {
    const seen: JsonRpcRequest[] = [];
    const onServerRequest = async (req: JsonRpcRequest) => {
      seen.push(req);
      if (req.method === 'sampling/createMessage') return SAMPLING_RESULT;
      throw new McpRpcError(-32601, `Method not found: ${req.method}`);
    };
    const sampled = await call(
      transport,
      toolCall('trigger-sampling-request', { prompt: 'say hi', maxTokens: 20 }),
      context({ onServerRequest }),
    );
    expect(sampled.result.isError).toBeFalsy();
    expect(texts(sampled.result)).toContain('fixed sampled answer');
    expect(seen.map((r) => r.method)).toContain('sampling/createMessage');
    expect(seen.find((r) => r.method === 'sampling/createMessage')?.params).toMatchObject({ maxTokens: 20 });
  });

  it('answers the elicitation request of trigger-elicitation-request through onServerRequest', async () => {
    const onServerRequest = async (req: JsonRpcRequest) => {
      if (req.method === 'elicitation/create')
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
      throw new McpRpcError(-32601, `Method not found: ${req.method}`);
    };
    const elicited = await call(transport, toolCall('trigger-elicitation-request'), context({ onServerRequest }));
    expect(texts(elicited.result)).toContain('- Name: Ada Lovelace');
    expect(texts(elicited.result)).toContain('- Agreed to terms: true');
  });

  it('without a handler the sampling request gets -32601 and the tool reports the failure', async () => {
    // Declare sampling without answering it: the server asks, the transport must refuse honestly.
    const declaring = new StdioTransport({
      command: everythingServer(),
      clientCapabilities: { sampling: {} },
      onSpawn: spawned.onSpawn,
    });
    try {
      const { result } = await call(declaring, toolCall('trigger-sampling-request', { prompt: 'say hi' }));
      expect(result.isError).toBe(true);
      expect(texts(result)).toMatch(/-32601/);
      expect(texts(result)).toContain('sampling/createMessage');
    } finally {
      await declaring.close();
    }
  });

  it('does not offer the sampling tool when the context cannot answer sampling', async () => {
    const { result } = await call(transport, request('tools/list'));
    const names = (result.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).not.toContain('trigger-sampling-request');
    expect(names).not.toContain('trigger-elicitation-request');
  });
});

describe('StdioTransport against @modelcontextprotocol/server-filesystem', () => {
  let directory: string;
  let transport: StdioTransport;
  const spawned = pidRecorder();

  beforeAll(() => {
    directory = realpathSync(mkdtempSync(join(tmpdir(), 'stdio-fs-')));
    writeFileSync(join(directory, 'note.txt'), 'written by the test\nsecond line ✓\n');
    transport = new StdioTransport({ command: filesystemServer(directory), onSpawn: spawned.onSpawn });
  });

  afterAll(async () => {
    await transport.close();
    rmSync(directory, { recursive: true, force: true });
    expect(spawned.pids.filter(isAlive)).toEqual([]);
  });

  it('lists the allowed directory and reads a file written by the test', async () => {
    const allowed = await call(transport, toolCall('list_allowed_directories'));
    expect(texts(allowed.result)).toContain(directory);
    const read = await call(transport, toolCall('read_text_file', { path: join(directory, 'note.txt') }));
    expect(read.result.structuredContent).toEqual({ content: 'written by the test\nsecond line ✓\n' });
  });

  it('refuses a path outside the allowed directory with an isError result', async () => {
    const { result } = await call(transport, toolCall('read_text_file', { path: '/etc/hostname' }));
    expect(result.isError).toBe(true);
    expect(texts(result)).toMatch(/access denied|outside allowed/i);
  });
});
