import { McpDatabaseUnavailableError } from '../errors/mcp-outage.errors';
import { isDependencyUnavailable } from './database-failures';

/** How long one database operation of the stores may take before the request gets a 503. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 5000;

/**
 * Resolves like `work`, or rejects with `McpDatabaseUnavailableError` once `timeoutMs` has
 * passed. A stopped or stalled database otherwise leaves the request waiting forever (the pg
 * pool queues a checkout without limit unless `connectionTimeoutMillis` is set). The work itself
 * is not cancelled: the pool's `statement_timeout` does that on the server.
 */
export function withDatabaseDeadline<T>(work: Promise<T>, timeoutMs: number, operation: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new McpDatabaseUnavailableError(operation, timeoutMs)), timeoutMs);
    timer.unref?.();
  });
  // The work may fail after the deadline won: that failure has nobody left to hear it.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * `withDatabaseDeadline`, and a database that is away (refused, dropped, stalled) rejects with
 * `McpDatabaseUnavailableError` too, the failure as its cause; other errors pass unchanged.
 */
export async function withDatabaseOutage<T>(work: Promise<T>, timeoutMs: number, operation: string): Promise<T> {
  try {
    return await withDatabaseDeadline(work, timeoutMs, operation);
  } catch (error) {
    if (error instanceof McpDatabaseUnavailableError || !isDependencyUnavailable(error)) throw error;
    throw new McpDatabaseUnavailableError(operation, undefined, { cause: error });
  }
}
