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
  // One promise settled by whichever comes first; the work may fail after the deadline won, and
  // that failure has nobody left to hear it.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new McpDatabaseUnavailableError(operation, timeoutMs)), timeoutMs);
    timer.unref?.();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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
