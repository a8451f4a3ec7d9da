import { Logger } from '@nestjs/common';
import { McpRedisOutageLog } from '../../redis-outage-log';
import type { McpRedisPubSub } from '../pubsub/redis-pubsub';
import { McpMemoryRateCounter, type McpRateCounter, type RateBudget, type RateVerdict } from './rate-counter';

/**
 * Counts one call in every budget (KEYS[i], limit ARGV[2i-1], window ARGV[2i] ms), or in none:
 * first each count is read, and the first one that reached its limit answers `{0, i, pttl}`;
 * otherwise each key is INCRed, and a key the call created (or one that lost its expiry) gets
 * PEXPIRE of its window, so every key disappears when its window closes. Atomic, as a script is.
 */
const TAKE_SCRIPT = `for i = 1, #KEYS do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count >= tonumber(ARGV[2 * i - 1]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
      ttl = tonumber(ARGV[2 * i])
    end
    return {0, i, ttl}
  end
end
for i = 1, #KEYS do
  if redis.call('INCR', KEYS[i]) == 1 or redis.call('PTTL', KEYS[i]) < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
  end
end
return {1, 0, 0}`;

/** One outage log per process for the counters of every mount. */
const outages = new McpRedisOutageLog(new Logger('McpRateLimits'));

/**
 * The counter of a mount with Redis: fixed windows in Redis keys, one script per call, so every
 * replica counts against the same budgets. While Redis does not answer (refused at once while the
 * connection is down, else past `advanced.pubsub.timeoutMs`) the replica counts in its own memory
 * and logs the outage: the budget then holds per replica (N replicas admit up to N times it)
 * rather than refusing every limited call or admitting all of them.
 */
export class McpRedisRateCounter implements McpRateCounter {
  private readonly local = new McpMemoryRateCounter();

  constructor(
    private readonly redis: Pick<McpRedisPubSub, 'script'>,
    private readonly outageLog: Pick<McpRedisOutageLog, 'report'> = outages,
  ) {}

  /** @inheritdoc */
  async take(budgets: readonly RateBudget[]): Promise<RateVerdict> {
    let answer: unknown;
    try {
      answer = await this.redis.script(
        'rate limit',
        TAKE_SCRIPT,
        budgets.map((budget) => budget.key),
        budgets.flatMap((budget) => [String(budget.limit), String(budget.windowMs)]),
      );
    } catch (error) {
      this.outageLog.report(
        `Rate limits: ${(error as Error)?.message ?? String(error)}; counting the budgets in this process until Redis answers`,
      );
      return this.local.takeNow(budgets);
    }
    const [allowed, position, ttl] = (answer as unknown[]).map(Number);
    return allowed === 1 ? { allowed: true } : { allowed: false, index: position - 1, retryAfterMs: ttl };
  }
}
