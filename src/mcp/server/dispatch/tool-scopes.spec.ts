import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { JsonRpcMessage } from '../../protocol/jsonrpc';
import { Toolset } from './toolset';
import type { RegisteredTool } from '../tools/registered-tool';

function tool(name: string, scopes?: string[]): RegisteredTool {
  return {
    name,
    owner: `Spec#${name}`,
    scopes,
    definition: { name, description: name, inputSchema: { type: 'object' } },
    validateInput: (value) => ({ ok: true, value }),
    invoke: async () => `${name} ran`,
  };
}

function context(principal: McpPrincipal, protocolVersion = '2025-11-25'): McpDeliveryContext {
  return { principal, sessionId: 's', protocolVersion };
}

const reader: McpPrincipal = { key: 'r', label: 'r', raw: null, scopes: ['read'] };
const admin: McpPrincipal = { key: 'a', label: 'a', raw: null, scopes: ['read', 'admin'] };
const inProcess: McpPrincipal = { key: 'p', label: 'p', raw: null };

describe('Toolset with scoped tools', () => {
  const toolset = new Toolset('spec', { name: 's', version: '1' }, 100);
  toolset.register(tool('open'));
  toolset.register(tool('purge', ['admin']));

  async function send(message: JsonRpcMessage, ctx: McpDeliveryContext) {
    return (await toolset.deliver(message, ctx)) as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string };
    };
  }
  const list = { jsonrpc: '2.0' as const, id: 1, method: 'tools/list' };
  const callPurge = { jsonrpc: '2.0' as const, id: 2, method: 'tools/call', params: { name: 'purge', arguments: {} } };
  const names = (reply: { result?: Record<string, unknown> }) =>
    (reply.result?.tools as Array<{ name: string }>).map((t) => t.name);

  it('lists a scoped tool only to principals holding its scopes; a principal without scopes holds none', async () => {
    expect(toolset.hasScopedTools).toBe(true);
    expect(names(await send(list, context(reader)))).toEqual(['open']);
    expect(names(await send(list, context(admin)))).toEqual(['open', 'purge']);
    expect(names(await send(list, context(inProcess)))).toEqual(['open']);
  });

  it('marks a stateless list private, since it depends on the caller, and leaves session lists alone', async () => {
    expect((await send(list, context(reader, '2026-07-28'))).result?.cacheScope).toBe('private');
    expect((await send(list, context(reader))).result).not.toHaveProperty('cacheScope');
  });

  it('refuses the call in process with a JSON-RPC error, and runs it for a principal with the scopes', async () => {
    expect((await send(callPurge, context(inProcess))).error).toEqual({
      code: -32000,
      message: 'Insufficient scope: tool "purge" needs the scopes admin',
    });
    expect((await send(callPurge, context(admin))).result).toEqual({ content: [{ type: 'text', text: 'purge ran' }] });
  });

  it('keeps the shared pages of a toolset without scoped tools', async () => {
    const plain = new Toolset('plain', { name: 'p', version: '1' }, 100);
    plain.register(tool('a'));
    expect(plain.hasScopedTools).toBe(false);
    expect(await plain.deliver(list, context(inProcess, '2026-07-28'))).toMatchObject({
      result: { tools: [{ name: 'a' }] },
    });
  });
});
