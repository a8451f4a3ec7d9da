import { createHash } from 'node:crypto';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { McpLimitExceededError } from '../config/limit-exceeded.errors';
import type { McpResolvedRateLimit } from '../config/mcp-rate-limit.options';
import type { McpPubSub } from '../pubsub/mcp-pubsub.interface';
import { McpRedisPubSub } from '../pubsub/redis-pubsub';
import { McpMemoryRateCounter, type McpRateCounter, type RateBudget } from './rate-counter';
import { McpRedisRateCounter } from './redis-rate-counter';

/** The name of the budgets in a refusal's `data.limit`. */
const RATE_LIMIT = 'rateLimit';

/** What the limits need of a tool: its name and its own budget. */
export interface RateLimitedTool {
  readonly name: string;
  readonly rateLimit?: McpResolvedRateLimit;
}

/** The counter of a mount: in Redis when its pub/sub is Redis (the mount's `redis`), else in memory. */
export function createRateCounter(pubsub: McpPubSub): McpRateCounter {
  return pubsub instanceof McpRedisPubSub ? new McpRedisRateCounter(pubsub) : new McpMemoryRateCounter();
}

/**
 * A principal's part of a key: a digest of its key, so that a key (an e-mail, a token-derived
 * id) never lands in Redis as it is, and every key has the same short length.
 */
function principalPart(principal: McpPrincipal): string {
  return createHash('sha256').update(principal.key).digest('base64url').slice(0, 22);
}

/**
 * The budgets of `tools/call` on one mount: the mount's per principal (`rateLimit`) and each
 * tool's own (`@McpTool({ rateLimit })`). Keys are `<prefix>:<mount>:rate:mount:w<windowMs>:<principal>`
 * and `<prefix>:<mount>:rate:tool:<name>:w<windowMs>[:<principal>]`, each expiring when its window
 * closes (a changed window starts a new count).
 */
export class ToolRateLimits {
  constructor(
    private readonly counter: McpRateCounter,
    /** `<advanced.pubsub.channelPrefix>:<mount>`. */
    private readonly keyPrefix: string,
    private readonly mountBudget: McpResolvedRateLimit | null,
  ) {}

  /** True when some budget counts the calls of `tool` (its own `rateLimit`, or the mount's). */
  apply(tool: RateLimitedTool): boolean {
    return !!tool.rateLimit || !!this.mountBudget;
  }

  /**
   * Counts one call of `tool` by `principal` in the budgets that apply, or throws
   * `McpLimitExceededError` (429, with when to retry) when one is spent; a refused call counts
   * in none.
   */
  async count(tool: RateLimitedTool, principal: McpPrincipal): Promise<void> {
    if (!this.apply(tool)) return;
    const own = tool.rateLimit;
    const who = principalPart(principal);
    const budgets: RateBudget[] = [];
    if (this.mountBudget) {
      const { limit, windowMs } = this.mountBudget;
      budgets.push({ key: `${this.keyPrefix}:rate:mount:w${windowMs}:${who}`, limit, windowMs });
    }
    if (own) {
      const key = `${this.keyPrefix}:rate:tool:${tool.name}:w${own.windowMs}`;
      budgets.push({ key: own.per === 'mount' ? key : `${key}:${who}`, limit: own.limit, windowMs: own.windowMs });
    }
    const verdict = await this.counter.take(budgets);
    if (verdict.allowed) return;
    const retryAfterMs = Math.max(1, verdict.retryAfterMs);
    const refusedByTool = own !== undefined && verdict.index === budgets.length - 1;
    throw refusedByTool
      ? toolRefusal(tool.name, own, retryAfterMs)
      : mountRefusal(this.mountBudget as McpResolvedRateLimit, retryAfterMs);
  }
}

function toolRefusal(name: string, budget: McpResolvedRateLimit, retryAfterMs: number): McpLimitExceededError {
  const { limit, windowMs, per } = budget;
  const whose = per === 'mount' ? 'for all callers together' : 'per caller';
  return new McpLimitExceededError(
    RATE_LIMIT,
    limit,
    `Rate limit exceeded: tool "${name}" allows ${limit} calls per ${windowMs} ms ${whose}; retry in ${retryAfterMs} ms`,
    {
      retryAfterMs,
      windowMs,
      tool: name,
      note: `Refused: rateLimit of tool "${name}" (${limit} per ${windowMs} ms per ${per}) reached`,
    },
  );
}

function mountRefusal(budget: McpResolvedRateLimit, retryAfterMs: number): McpLimitExceededError {
  const { limit, windowMs } = budget;
  return new McpLimitExceededError(
    RATE_LIMIT,
    limit,
    `Rate limit exceeded: ${limit} tool calls per ${windowMs} ms per caller; retry in ${retryAfterMs} ms`,
    { retryAfterMs, windowMs, note: `Refused: rateLimit (${limit} per ${windowMs} ms per principal) reached` },
  );
}
