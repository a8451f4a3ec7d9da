import { McpRpcError } from '../../src/mcp/errors';
import type { JsonRpcNotification } from '../../src/mcp/protocol';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import type { McpServerRequestHandler } from '../../src/mcp/client/transports/mcp-transport.interface';
import { call, context, rawServer, toolCall } from '../fixtures/stdio/stdio-test-kit';

/**
 * How a stdio transport answers the requests a server makes during a call when the client's
 * handler gives nothing back or fails, and which server notifications reach the caller.
 */
describe('StdioTransport answering server requests', () => {
  let transport: StdioTransport;

  beforeEach(() => {
    transport = new StdioTransport({ command: rawServer() });
  });
  afterEach(() => transport.close());

  /** The reply the fixture got to its sampling/createMessage request, answered by `handler`. */
  async function sampleReply(handler: McpServerRequestHandler): Promise<Record<string, unknown>> {
    const { result } = await call(transport, toolCall('sample'), context({ onServerRequest: handler }));
    return result.structuredContent.reply as Record<string, unknown>;
  }

  it("answers with the handler's result", async () => {
    await expect(
      sampleReply(async () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'hi' } })),
    ).resolves.toMatchObject({
      result: { model: 'm', role: 'assistant' },
    });
  });

  it('answers -32603 when the handler gives back no result object', async () => {
    const reply = await sampleReply(async () => undefined as unknown as Record<string, unknown>);
    expect(reply).toMatchObject({
      error: { code: -32603, message: 'Internal error: no result for sampling/createMessage' },
    });
  });

  it('answers with the JSON-RPC error of an McpRpcError the handler throws', async () => {
    const reply = await sampleReply(async () => {
      throw new McpRpcError(-32001, 'the user declined', { retry: false });
    });
    expect(reply).toMatchObject({ error: { code: -32001, message: 'the user declined', data: { retry: false } } });
  });

  it('answers -32603 without the detail of any other failure of the handler', async () => {
    const reply = await sampleReply(async () => {
      throw new Error('secret stack detail');
    });
    expect(reply).toMatchObject({
      error: { code: -32603, message: 'Internal error while handling sampling/createMessage' },
    });
    expect(JSON.stringify(reply)).not.toContain('secret stack detail');
  });

  it('passes server notifications on, but not notifications/cancelled', async () => {
    const seen: JsonRpcNotification[] = [];
    const { result } = await call(
      transport,
      toolCall('cancel-notice'),
      context({ onNotification: (n) => seen.push(n) }),
    );
    expect(result.structuredContent).toEqual({ sent: 2 });
    expect(seen.map((n) => n.method)).toEqual(['notifications/message']);
  });
});
