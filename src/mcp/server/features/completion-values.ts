import type { McpCompletionList } from '../../interfaces/mcp-completion.interface';

/** The most values one `completion/complete` result may carry. */
export const MAX_COMPLETION_VALUES = 100;

/** The `completion` object of a result with no suggestion. */
export const NO_COMPLETION: McpCompletionList = Object.freeze({ values: [], total: 0, hasMore: false });

function isCompletionList(value: unknown): value is McpCompletionList {
  return (
    !!value && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as McpCompletionList).values)
  );
}

/**
 * Shapes what a completer returned into the `completion` object of a result: at most 100 string
 * values, `total` (what the completer said, else how many it returned) and `hasMore` (what it
 * said, or true when values were cut off).
 */
export function toCompletion(returned: unknown): McpCompletionList {
  const list: McpCompletionList | null = Array.isArray(returned)
    ? { values: returned as string[] }
    : isCompletionList(returned)
      ? returned
      : null;
  if (!list) throw new Error('A completer must return an array of strings or { values, total?, hasMore? }');
  if (list.values.some((value) => typeof value !== 'string')) throw new Error('A completer must return string values');
  const values = list.values.slice(0, MAX_COMPLETION_VALUES);
  const cut = list.values.length > values.length;
  const total =
    typeof list.total === 'number' && Number.isInteger(list.total) && list.total >= list.values.length
      ? list.total
      : list.values.length;
  return { values, total, hasMore: cut || list.hasMore === true || total > values.length };
}

/** Reads `context.arguments` of a request: only string values are passed on. */
export function completionArguments(context: unknown): Record<string, string> {
  const args = context && typeof context === 'object' ? (context as { arguments?: unknown }).arguments : undefined;
  if (!args || typeof args !== 'object' || Array.isArray(args)) return {};
  return Object.fromEntries(
    Object.entries(args).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
