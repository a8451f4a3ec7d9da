import type { McpToolContext } from './mcp-tool-context.interface';

/** What a completer receives besides the partial value: the handler context plus earlier arguments. */
export interface McpCompletionContext extends McpToolContext {
  /** Arguments the client already resolved (`context.arguments` of `completion/complete`). */
  arguments: Record<string, string>;
}

/** A completer's answer in full: at most 100 values are sent; `total` and `hasMore` are passed on. */
export interface McpCompletionList {
  /** Suggestions, most relevant first. */
  values: string[];
  /** How many suggestions exist in all, when known. */
  total?: number;
  /** Whether more suggestions exist than were returned. */
  hasMore?: boolean;
}

/**
 * Suggests values for one prompt argument or template variable from what the user typed so far.
 * Return the suggestions (the first 100 are sent, with `total` and `hasMore` filled in) or a
 * full `McpCompletionList`.
 */
export type McpCompleter = (
  value: string,
  context: McpCompletionContext,
) => string[] | McpCompletionList | Promise<string[] | McpCompletionList>;

/**
 * Completers keyed by argument (or template variable) name: a function (called without `this`),
 * or the name of a method of the same provider, called as `method(value, context)` on the
 * provider instance.
 */
export type McpCompleters = Record<string, McpCompleter | string>;
