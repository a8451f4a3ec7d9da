import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { JsonRpcError, JsonRpcResponse } from '../../protocol/jsonrpc';
import { httpHeadersOf, httpStatusOf } from '../config/limit-exceeded.errors';
import type { McpResolvedRateLimit } from '../config/mcp-rate-limit.options';
import { auditNoteOf } from '../pipeline/handler-refusal';
import { McpMemoryRateCounter } from '../ratelimit/rate-counter';
import { ToolRateLimits } from '../ratelimit/tool-rate-limits';
import type { RegisteredTool } from '../tools/registered-tool';
import { Toolset } from './toolset';

const alice: McpDeliveryContext = {
  principal: { key: 'alice', label: 'Alice', raw: null, roles: [] },
  sessionId: 's-1',
  protocolVersion: '2025-11-25',
};

/** A toolset whose tool `search` (and `admin`, for role `admin` only) counts how often it ran. */
function toolsetWith(rateLimit: McpResolvedRateLimit | undefined, mountBudget: McpResolvedRateLimit | null = null) {
  const runs: string[] = [];
  const toolset = new Toolset(
    'm',
    { name: 'n', version: '1' },
    10,
    new ToolRateLimits(new McpMemoryRateCounter(), 'mcp:m', mountBudget),
  );
  const tool = (name: string, extra: Partial<RegisteredTool> = {}): RegisteredTool => ({
    name,
    owner: `Tools#${name}`,
    definition: { name, inputSchema: { type: 'object' } },
    validateInput: async (value) => ({ ok: true, value }),
    invoke: async () => (runs.push(name), `${name} ran`),
    rateLimit,
    ...extra,
  });
  toolset.register(tool('search'));
  toolset.register(tool('admin', { roles: ['admin'] }));
  toolset.register(tool('book', { taskSupport: 'optional' }));
  toolset.onTaskCall(async () => ({ task: { taskId: 't-1', status: 'working' } }));
  return { toolset, runs };
}

const call = (
  toolset: Toolset,
  name: string,
  context: McpDeliveryContext = alice,
  params: Record<string, unknown> = {},
) =>
  toolset.deliver({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {}, ...params } }, context);

const budget = (limit: number, windowMs = 60_000): McpResolvedRateLimit => ({ limit, windowMs, per: 'principal' });

describe('Toolset and rate limits', () => {
  it('answers a call over the budget with 429, -32000, Retry-After and data.retryAfterMs, an audit note, and does not run the tool', async () => {
    const { toolset, runs } = toolsetWith(budget(2, 30_000));
    await call(toolset, 'search');
    await call(toolset, 'search');
    const refused = (await call(toolset, 'search')) as JsonRpcError & JsonRpcResponse;
    expect(runs).toEqual(['search', 'search']);
    expect(refused.error).toMatchObject({
      code: -32000,
      data: { limit: 'rateLimit', max: 2, windowMs: 30_000, tool: 'search' },
    });
    const { retryAfterMs } = refused.error.data as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(30_000);
    expect(httpStatusOf(refused)).toBe(429);
    expect(httpHeadersOf(refused)).toEqual({ 'Retry-After': String(Math.ceil(retryAfterMs / 1000)) });
    expect(auditNoteOf(refused)).toBe('Refused: rateLimit of tool "search" (2 per 30000 ms per principal) reached');
    // Nothing of it goes on the wire.
    expect(JSON.parse(JSON.stringify(refused))).toEqual({ jsonrpc: '2.0', id: 7, error: refused.error });
  });

  it('never counts tools/list, nor a call refused before the budgets (unknown tool, missing role)', async () => {
    const { toolset, runs } = toolsetWith(undefined, budget(1));
    for (let i = 0; i < 3; i++) {
      await toolset.deliver({ jsonrpc: '2.0', id: i, method: 'tools/list' }, alice);
      expect(await call(toolset, 'admin')).toMatchObject({ error: { code: -32602 } });
      expect(await call(toolset, 'missing')).toMatchObject({ error: { code: -32602 } });
    }
    expect(await call(toolset, 'search')).toMatchObject({ result: { content: [{ text: 'search ran' }] } });
    expect(await call(toolset, 'search')).toMatchObject({ error: { code: -32000 } });
    expect(runs).toEqual(['search']);
  });

  it('counts a task when it is created, not again when a worker runs it', async () => {
    const { toolset, runs } = toolsetWith(budget(1));
    expect(await call(toolset, 'book', alice, { task: {} })).toMatchObject({ result: { task: { taskId: 't-1' } } });
    const worker: McpDeliveryContext = { ...alice, task: { id: 't-1', update: async () => true } };
    expect(await call(toolset, 'book', worker)).toMatchObject({ result: { content: [{ text: 'book ran' }] } });
    expect(runs).toEqual(['book']);
    expect(await call(toolset, 'book', alice, { task: {} })).toMatchObject({ error: { code: -32000 } });
  });

  it('a toolset built without limits counts nothing', async () => {
    const toolset = new Toolset('m', { name: 'n', version: '1' }, 10);
    toolset.register({
      name: 'free',
      owner: 'Tools#free',
      definition: { name: 'free', inputSchema: { type: 'object' } },
      validateInput: async (value) => ({ ok: true, value }),
      invoke: async () => 'ok',
    });
    for (let i = 0; i < 5; i++) expect(await call(toolset, 'free')).toHaveProperty('result');
  });
});
