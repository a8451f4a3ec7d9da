import { McpProtocolError, McpTimeoutError, McpTransportError } from '../../../errors/mcp-client.errors';
import type { McpDeliveryContext, McpMessageHandler } from '../../../interfaces/mcp-delivery.interface';
import type { JsonRpcMessage, JsonRpcResponse } from '../../../protocol/jsonrpc';
import type { McpHandshakeInfo, McpTransportContext } from '../mcp-transport.interface';
import { ToolsetTransport } from './toolset.transport';

type Answer = (message: JsonRpcMessage, context: McpDeliveryContext) => Promise<JsonRpcResponse | null>;

/** A message handler that records what it is given and answers with `answer`. */
function handler(
  answer: Answer,
): McpMessageHandler & { seen: Array<{ message: JsonRpcMessage; context: McpDeliveryContext }> } {
  const seen: Array<{ message: JsonRpcMessage; context: McpDeliveryContext }> = [];
  return {
    seen,
    deliver: (message, context) => {
      seen.push({ message, context });
      return answer(message, context);
    },
  };
}

const initialized = (result: Record<string, unknown>): JsonRpcResponse => ({ jsonrpc: '2.0', id: 0, result });
const principal = { key: 'alice', label: 'Alice', raw: null };
const methodOf = (message: JsonRpcMessage): unknown => (message as { method?: string }).method;
const call = { jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: 'echo' } };
const context = (extra: Partial<McpTransportContext> = {}): McpTransportContext => ({
  server: 'local',
  scopeKey: '',
  timeoutMs: 5000,
  ...extra,
});
const never = () => new Promise<never>(() => undefined);

describe('ToolsetTransport', () => {
  it('performs an in-process initialize when no revision is known, reports it, then delivers as the principal', async () => {
    const toolset = handler(async (message) =>
      methodOf(message) === 'initialize'
        ? initialized({
            protocolVersion: '2025-06-18',
            serverInfo: { name: 'app' },
            capabilities: { tools: {} },
            instructions: 'Be brief.',
          })
        : { jsonrpc: '2.0', id: 7, result: { content: [] } },
    );
    const handshakes: McpHandshakeInfo[] = [];
    const transport = new ToolsetTransport({
      resolveHandler: () => toolset,
      principal,
      clientInfo: { name: 'host', version: '9' },
    });
    const outcome = await transport.deliver(call, {
      sessionId: null,
      context: context({ onHandshake: (h) => handshakes.push(h) }),
    });
    const expected = {
      protocolVersion: '2025-06-18',
      serverInfo: { name: 'app' },
      capabilities: { tools: {} },
      instructions: 'Be brief.',
    };
    expect(handshakes).toEqual([expected]);
    expect(outcome).toEqual({
      body: { jsonrpc: '2.0', id: 7, result: { content: [] } },
      sessionId: null,
      handshake: expected,
      rawRequest: JSON.stringify(call),
      rawResponse: JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [] } }),
      status: null,
      stderr: '',
    });
    expect((toolset.seen[0].message as { params: Record<string, unknown> }).params.clientInfo).toEqual({
      name: 'host',
      version: '9',
    });
    expect(toolset.seen[1].context).toMatchObject({ principal, sessionId: null, protocolVersion: '2025-06-18' });
  });

  it('reports a handshake without serverInfo, capabilities or instructions as nulls', async () => {
    const toolset = handler(async (message) =>
      methodOf(message) === 'initialize'
        ? initialized({ protocolVersion: '2025-11-25' })
        : { jsonrpc: '2.0', id: 7, result: {} },
    );
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const outcome = await transport.deliver(call, { sessionId: null, context: context() });
    expect(outcome.handshake).toEqual({ protocolVersion: '2025-11-25', serverInfo: null, capabilities: null });
    expect((toolset.seen[0].message as { params: Record<string, unknown> }).params.clientInfo).toEqual({
      name: 'durable-mcp',
      version: '0.1.0',
    });
  });

  it.each<[string, JsonRpcResponse | null, string]>([
    [
      'an error',
      { jsonrpc: '2.0', id: 0, error: { code: -32603, message: 'boom' } },
      'In-process initialize failed: {"code":-32603,"message":"boom"}',
    ],
    ['nothing', null, 'In-process initialize failed: null'],
  ])('fails undelivered when initialize answers %s', async (_case, answer, message) => {
    const toolset = handler(async () => answer);
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const failure = transport.deliver(call, { sessionId: null, context: context() });
    await expect(failure).rejects.toBeInstanceOf(McpProtocolError);
    await expect(failure).rejects.toMatchObject({ message, delivered: false });
    expect(toolset.seen.map((s) => methodOf(s.message))).toEqual(['initialize']);
  });

  it('delivers a notification and expects no answer', async () => {
    const toolset = handler(async () => null);
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const notice = { jsonrpc: '2.0' as const, method: 'notifications/roots/list_changed' };
    await expect(
      transport.deliver(notice, { sessionId: null, protocolVersion: '2025-11-25', context: context() }),
    ).resolves.toMatchObject({ body: null, rawResponse: null, handshake: undefined });
    expect(toolset.seen.map((s) => s.message)).toEqual([notice]);
  });

  it('fails a request the toolset did not answer as delivered, and cancels it', async () => {
    const toolset = handler(async () => null);
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const failure = transport.deliver(call, { sessionId: null, protocolVersion: '2025-11-25', context: context() });
    await expect(failure).rejects.toBeInstanceOf(McpProtocolError);
    await expect(failure).rejects.toMatchObject({
      message: 'The toolset of "local" did not answer tools/call',
      delivered: true,
    });
    expect(toolset.seen.map((s) => s.message)).toEqual([
      call,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'timeout' } },
    ]);
  });

  it("times out at the caller's deadline, aborts the work and sends notifications/cancelled, even if the notice fails", async () => {
    const toolset = handler(async (message) => {
      if (methodOf(message) === 'notifications/cancelled') throw new Error('gone');
      return never();
    });
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const failure = transport.deliver(call, {
      sessionId: null,
      protocolVersion: '2025-11-25',
      context: context({ timeoutMs: 60_000, deadlineAt: Date.now() - 1 }),
    });
    await expect(failure).rejects.toBeInstanceOf(McpTimeoutError);
    await expect(failure).rejects.toMatchObject({
      message: 'tools/call on "local" timed out after 60000 ms',
      delivered: true,
      timeoutMs: 60_000,
    });
    expect(toolset.seen[0].context.signal?.aborted).toBe(true);
    expect(toolset.seen.map((s) => methodOf(s.message))).toEqual(['tools/call', 'notifications/cancelled']);
  });

  it('times out a notification without sending a cancel notice', async () => {
    const toolset = handler(never);
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const notice = { jsonrpc: '2.0' as const, method: 'notifications/initialized' };
    await expect(
      transport.deliver(notice, { sessionId: null, protocolVersion: '2025-11-25', context: context({ timeoutMs: 1 }) }),
    ).rejects.toBeInstanceOf(McpTimeoutError);
    expect(toolset.seen.map((s) => methodOf(s.message))).toEqual(['notifications/initialized']);
  });

  it("passes the caller's abort on to the toolset", async () => {
    const caller = new AbortController();
    let aborted: unknown;
    const toolset = handler(
      (_message, delivery) =>
        new Promise((resolve) => {
          delivery.signal?.addEventListener('abort', () => {
            aborted = delivery.signal?.reason;
            resolve({ jsonrpc: '2.0', id: 7, result: { isError: true, content: [] } });
          });
          caller.abort('user left');
        }),
    );
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    await expect(
      transport.deliver(call, {
        sessionId: null,
        protocolVersion: '2025-11-25',
        context: context({ signal: caller.signal }),
      }),
    ).resolves.toMatchObject({ body: { id: 7 } });
    expect(aborted).toBe('user left');
  });

  it('turns a failure of the toolset itself into a delivered McpTransportError', async () => {
    const toolset = handler(async () => {
      throw new Error('database is down');
    });
    const transport = new ToolsetTransport({ resolveHandler: () => toolset, principal });
    const failure = transport.deliver(call, { sessionId: null, protocolVersion: '2025-11-25', context: context() });
    await expect(failure).rejects.toBeInstanceOf(McpTransportError);
    await expect(failure).rejects.toMatchObject({
      message: 'The toolset of "local" failed: database is down',
      delivered: true,
    });
    expect(toolset.seen).toHaveLength(1);
  });
});
