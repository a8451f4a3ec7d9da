import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { JsonRpcMessage, JsonRpcResponse } from '../../protocol/jsonrpc';
import { Toolset } from '../dispatch/toolset';
import type { RegisteredTool } from '../tools/registered-tool';
import { auditNoteOf, hasSomeRole } from './handler-refusal';

function tool(name: string, roles?: string[]): RegisteredTool {
  return {
    name,
    owner: `Spec#${name}`,
    roles,
    definition: { name, description: name, inputSchema: { type: 'object' } },
    validateInput: (value) => ({ ok: true, value }),
    invoke: async () => `${name} ran`,
  };
}

const context = (principal: McpPrincipal, protocolVersion = '2025-11-25'): McpDeliveryContext => ({
  principal,
  sessionId: null,
  protocolVersion,
});
const auditor: McpPrincipal = { key: 'a', label: 'a', raw: null, roles: ['auditor'] };
const staff: McpPrincipal = { key: 's', label: 's', raw: null, roles: ['staff'] };
const inProcess: McpPrincipal = { key: 'p', label: 'p', raw: null };

describe('Toolset with role-restricted tools (in process)', () => {
  const toolset = new Toolset('spec', { name: 's', version: '1' }, 100);
  toolset.register(tool('open'));
  toolset.register(tool('ledger', ['auditor', 'admin']));
  const send = (message: JsonRpcMessage, ctx: McpDeliveryContext) =>
    toolset.deliver(message, ctx) as Promise<
      JsonRpcResponse & { result?: Record<string, unknown>; error?: { code: number; message: string } }
    >;
  const list = { jsonrpc: '2.0' as const, id: 1, method: 'tools/list' };
  const call = { jsonrpc: '2.0' as const, id: 2, method: 'tools/call', params: { name: 'ledger', arguments: {} } };
  const names = (reply: { result?: Record<string, unknown> }) =>
    (reply.result?.tools as Array<{ name: string }>).map((t) => t.name);

  it('lists the tool to a principal holding one of its roles only, and marks a stateless list private', async () => {
    expect(names(await send(list, context(auditor)))).toEqual(['open', 'ledger']);
    expect(names(await send(list, context(staff)))).toEqual(['open']);
    expect(names(await send(list, context(inProcess)))).toEqual(['open']);
    expect((await send(list, context(staff, '2026-07-28'))).result?.cacheScope).toBe('private');
  });

  it('answers a refused call as an unknown tool, with the reason only in the audit note', async () => {
    const refused = await send(call, context(staff));
    expect(refused.error).toEqual({ code: -32602, message: 'Unknown tool: ledger' });
    expect(auditNoteOf(refused)).toBe('Refused tool "ledger" by roles (needs one of auditor admin)');
    expect(JSON.stringify(refused)).not.toContain('roles');
    const allowed = await send(call, context(auditor));
    expect(allowed.result).toEqual({ content: [{ type: 'text', text: 'ledger ran' }] });
    expect(auditNoteOf(allowed)).toBeNull();
  });

  it('lets anyone through when no role is asked for', () => {
    expect(hasSomeRole(undefined, inProcess)).toBe(true);
    expect(hasSomeRole([], inProcess)).toBe(true);
    expect(hasSomeRole(['x'], inProcess)).toBe(false);
  });
});
