import type { McpConsoleScope, McpConsoleScopeFn } from './mcp-console.options';

/** A `scope` option that returned something the console cannot apply: it answers 500 and shows nothing. */
export class ConsoleScopeError extends Error {
  constructor(returned: unknown) {
    super(
      `McpConsoleModule: the "scope" option returned ${describeValue(returned)}; it must return 'all' or { principalKeys: string[] } ` +
        `(an empty list shows nothing).`,
    );
    this.name = 'ConsoleScopeError';
  }
}

function describeValue(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value === 'object' ? 'an object without a principalKeys list of strings' : typeof value;
}

/**
 * The scope of one request: `'all'` without a `scope` option, else what it returns, checked. A
 * value it cannot apply throws `ConsoleScopeError`, so a mistake never widens what a reader sees.
 */
export async function scopeOf(scope: McpConsoleScopeFn | undefined, request: unknown): Promise<McpConsoleScope> {
  if (!scope) return 'all';
  const value: unknown = await scope(request);
  if (value === 'all') return 'all';
  const keys =
    typeof value === 'object' && value !== null ? (value as { principalKeys?: unknown }).principalKeys : undefined;
  if (!Array.isArray(keys) || !keys.every((key) => typeof key === 'string')) throw new ConsoleScopeError(value);
  return { principalKeys: [...new Set(keys)] };
}
