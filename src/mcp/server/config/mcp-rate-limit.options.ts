import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpRateLimit } from '../../interfaces/mcp-tool-options.interface';
import { invalidRateLimitMessage } from '../../mcp.messages';

/** A budget of calls after its check: `per` is `'principal'` unless the tool said `'mount'`. */
export type McpResolvedRateLimit = Readonly<Required<McpRateLimit>>;

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;

/**
 * Checks a `rateLimit` option (a tool's, or the mount's when `perAllowed` is false): positive
 * integers `limit` and `windowMs`, `per` `'principal'` or `'mount'`, no other key. Absent: null.
 * Throws `McpConfigurationError` starting with `where`.
 */
export function checkedRateLimit(value: unknown, where: string, perAllowed: boolean): McpResolvedRateLimit | null {
  if (value === undefined) return null;
  const fields = value as Record<string, unknown> | null;
  const allowed = perAllowed ? ['limit', 'windowMs', 'per'] : ['limit', 'windowMs'];
  if (
    typeof fields !== 'object' ||
    fields === null ||
    Array.isArray(fields) ||
    !isCount(fields.limit) ||
    !isCount(fields.windowMs) ||
    Object.keys(fields).some((key) => !allowed.includes(key)) ||
    (fields.per !== undefined && fields.per !== 'principal' && fields.per !== 'mount')
  ) {
    throw new McpConfigurationError(invalidRateLimitMessage(where, value, perAllowed));
  }
  return Object.freeze({
    limit: fields.limit,
    windowMs: fields.windowMs,
    per: fields.per ?? 'principal',
  });
}
