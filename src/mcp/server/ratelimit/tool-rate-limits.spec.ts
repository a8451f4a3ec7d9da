import { McpLimitExceededError } from '../config/limit-exceeded.errors';
import type { McpResolvedRateLimit } from '../config/mcp-rate-limit.options';
import { McpMemoryRateCounter, type McpRateCounter, type RateBudget } from './rate-counter';
import { ToolRateLimits } from './tool-rate-limits';

const alice = { key: 'alice@example.com', label: 'Alice', raw: {} };
const bob = { key: 'bob@example.com', label: 'Bob', raw: {} };
const limit = (limit: number, windowMs: number, per: 'principal' | 'mount' = 'principal'): McpResolvedRateLimit => ({
  limit,
  windowMs,
  per,
});

/** Runs `n` calls and tells which were admitted. */
async function calls(limits: ToolRateLimits, n: number, tool: Parameters<ToolRateLimits['count']>[0], who = alice) {
  const admitted: boolean[] = [];
  for (let i = 0; i < n; i++)
    admitted.push(
      await limits.count(tool, who).then(
        () => true,
        (error: unknown) => {
          if (!(error instanceof McpLimitExceededError)) throw error;
          return false;
        },
      ),
    );
  return admitted;
}

describe('ToolRateLimits', () => {
  it('counts nothing for a tool without a budget on a mount without one (the counter is not asked)', async () => {
    const counter: McpRateCounter = { take: jest.fn() };
    await new ToolRateLimits(counter, 'mcp:m', null).count({ name: 'free' }, alice);
    expect(counter.take).not.toHaveBeenCalled();
  });

  it("gives each principal a budget of its own for a tool's per-principal limit", async () => {
    const limits = new ToolRateLimits(new McpMemoryRateCounter(), 'mcp:m', null);
    const tool = { name: 'search', rateLimit: limit(2, 60_000) };
    expect(await calls(limits, 3, tool, alice)).toEqual([true, true, false]);
    expect(await calls(limits, 3, tool, bob)).toEqual([true, true, false]);
  });

  it("shares one budget between every caller for per: 'mount'", async () => {
    const limits = new ToolRateLimits(new McpMemoryRateCounter(), 'mcp:m', null);
    const tool = { name: 'report', rateLimit: limit(3, 60_000, 'mount') };
    expect(await calls(limits, 2, tool, alice)).toEqual([true, true]);
    expect(await calls(limits, 2, tool, bob)).toEqual([true, false]);
  });

  it("counts every tool against the mount's budget per principal", async () => {
    const limits = new ToolRateLimits(new McpMemoryRateCounter(), 'mcp:m', limit(3, 60_000));
    expect(await calls(limits, 2, { name: 'one' })).toEqual([true, true]);
    expect(await calls(limits, 2, { name: 'two' })).toEqual([true, false]);
    expect(await calls(limits, 1, { name: 'two' }, bob)).toEqual([true]);
  });

  it('refuses with a 429 error naming the spent budget and when to retry', async () => {
    let now = 0;
    const limits = new ToolRateLimits(new McpMemoryRateCounter(() => now), 'mcp:m', limit(10, 60_000));
    const tool = { name: 'search', rateLimit: limit(1, 5_000) };
    await limits.count(tool, alice);
    now = 1_500;
    const byTool = await limits.count(tool, alice).catch((error: unknown) => error);
    expect(byTool).toBeInstanceOf(McpLimitExceededError);
    expect((byTool as McpLimitExceededError).toJsonRpc()).toEqual({
      code: -32000,
      message: 'Rate limit exceeded: tool "search" allows 1 calls per 5000 ms per caller; retry in 3500 ms',
      data: { limit: 'rateLimit', max: 1, windowMs: 5000, retryAfterMs: 3500, tool: 'search' },
    });
    expect((byTool as McpLimitExceededError).auditNote).toBe(
      'Refused: rateLimit of tool "search" (1 per 5000 ms per principal) reached',
    );
    for (let i = 0; i < 9; i++) await limits.count({ name: 'other' }, bob);
    await limits.count({ name: 'other' }, bob);
    const byMount = (await limits
      .count({ name: 'other' }, bob)
      .catch((error: unknown) => error)) as McpLimitExceededError;
    expect(byMount.toJsonRpc()).toEqual({
      code: -32000,
      message: 'Rate limit exceeded: 10 tool calls per 60000 ms per caller; retry in 60000 ms',
      data: { limit: 'rateLimit', max: 10, windowMs: 60000, retryAfterMs: 60000 },
    });
    expect(byMount.auditNote).toBe('Refused: rateLimit (10 per 60000 ms per principal) reached');
  });

  it('keys the budgets by mount, tool and window, with a digest of the principal key, never the key itself', async () => {
    const seen: RateBudget[][] = [];
    const counter: McpRateCounter = { take: async (budgets) => (seen.push([...budgets]), { allowed: true }) };
    const limits = new ToolRateLimits(counter, 'app:tenant', limit(100, 60_000));
    await limits.count({ name: 'search', rateLimit: limit(5, 1_000) }, alice);
    await limits.count({ name: 'report', rateLimit: limit(5, 1_000, 'mount') }, alice);
    const keys = seen.flat().map((budget) => budget.key);
    expect(keys.some((key) => key.includes('alice'))).toBe(false);
    const digest = keys[0].split(':').pop() as string;
    expect(digest).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(keys).toEqual([
      `app:tenant:rate:mount:w60000:${digest}`,
      `app:tenant:rate:tool:search:w1000:${digest}`,
      `app:tenant:rate:mount:w60000:${digest}`,
      'app:tenant:rate:tool:report:w1000',
    ]);
  });
});
