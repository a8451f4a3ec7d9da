import type { McpConsoleCursor, McpConsoleEventFilter } from './mcp-console-records.interface';

/** A query string value as the adapters hand it over: absent, one value or a repeated key. */
export type QueryValue = string | string[] | undefined;

/** A query string the console cannot use; the page answers 400 with this message. */
export class ConsoleQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsoleQueryError';
  }
}

/** Longest filter value the console accepts (the widest filtered column is 255 characters). */
const MAX_FILTER_LENGTH = 255;

/** One value of a query parameter, trimmed; empty counts as absent. A repeated key is refused. */
export function single(query: Record<string, QueryValue>, key: string): string | undefined {
  const value = query[key];
  if (Array.isArray(value)) throw new ConsoleQueryError(`"${key}" was given ${value.length} times: give it once.`);
  if (value === undefined || typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (trimmed.length > MAX_FILTER_LENGTH)
    throw new ConsoleQueryError(`"${key}" is longer than ${MAX_FILTER_LENGTH} characters.`);
  return trimmed;
}

/**
 * A time bound of the filter form: `YYYY-MM-DDTHH:MM[:SS[.mmm]]` (a `datetime-local` input,
 * read as UTC) or an ISO 8601 time with `Z` or an offset.
 */
export function parseTime(key: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const local = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text);
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const time = local ? Date.parse(`${text.replace(' ', 'T')}Z`) : zoned ? Date.parse(text) : NaN;
  if (Number.isNaN(time))
    throw new ConsoleQueryError(
      `"${key}" must be a time like 2026-01-31T14:05 (UTC) or an ISO 8601 time with a zone, got "${text}".`,
    );
  return new Date(time);
}

/** Reads the events page's filters; a bad value throws `ConsoleQueryError`. */
export function parseEventFilter(query: Record<string, QueryValue>): McpConsoleEventFilter {
  const status = single(query, 'status');
  if (status !== undefined && status !== 'ok' && status !== 'error')
    throw new ConsoleQueryError(`"status" must be ok or error, got "${status}".`);
  const filter: McpConsoleEventFilter = {
    principal: single(query, 'principal'),
    method: single(query, 'method'),
    tool: single(query, 'tool'),
    status,
    from: parseTime('from', single(query, 'from')),
    to: parseTime('to', single(query, 'to')),
  };
  if (filter.from && filter.to && filter.from.getTime() >= filter.to.getTime())
    throw new ConsoleQueryError(`"from" must be before "to".`);
  return filter;
}

/** The text of a cursor in a link: `<epoch ms>.<row id>`. */
export function formatCursor(cursor: McpConsoleCursor): string {
  return `${cursor.at.getTime()}.${cursor.id}`;
}

/** Reads the `before` parameter of a page link; null when absent. */
export function parseCursor(query: Record<string, QueryValue>): McpConsoleCursor | null {
  const text = single(query, 'before');
  if (text === undefined) return null;
  const match = /^(\d{1,15})\.([A-Za-z0-9_-]{1,64})$/.exec(text);
  if (!match)
    throw new ConsoleQueryError(
      `"before" is not a page cursor of this console (follow the "Older" link instead of writing one).`,
    );
  return { at: new Date(Number(match[1])), id: match[2] };
}
