/**
 * Caps on what one principal (or one session) may hold on a mount, so a single caller cannot
 * exhaust the server's memory, connections or tables. An exceeded cap answers HTTP 429 with a
 * JSON-RPC error (`-32000`, `data: { limit, max }`), or a JSON-RPC error for
 * `resources/subscribe`; a `subscriptions/listen` filter list longer than its cap is refused
 * as invalid params (`-32602`, with the same `data`).
 */
export interface McpLimitsOptions {
  /**
   * Live 2025 sessions per principal on the mount, counted in the database (so the cap holds
   * across replicas); `initialize` beyond it answers 429. Terminated and idle sessions do not count.
   * @default 100
   */
  sessionsPerPrincipal?: number;
  /**
   * Open GET streams (2025 sessions) per principal, counted per process: with N replicas a
   * principal may hold up to N times this many.
   * @default 100
   */
  streamsPerPrincipal?: number;
  /**
   * Open `subscriptions/listen` streams (2026-07-28) per principal, counted per process.
   * @default 100
   */
  listenStreamsPerPrincipal?: number;
  /**
   * Entries of `notifications.resourceSubscriptions` one `subscriptions/listen` request may name
   * (counted as sent, duplicates included), checked before any URI is looked at.
   * @default 1000
   */
  listenResourceSubscriptions?: number;
  /**
   * Entries of `notifications.taskIds` one `subscriptions/listen` request may name (counted as
   * sent), checked before any task is looked up in the database.
   * @default 1000
   */
  listenTaskIds?: number;
  /**
   * Resource URIs one session may watch (`resources/subscribe`), counted in the database.
   * @default 1000
   */
  subscriptionsPerSession?: number;
  /**
   * Tasks per principal that are not over yet (`working` or `input_required`, not expired),
   * counted in the database (so the cap holds across replicas); a task-augmented `tools/call`
   * beyond it answers 429 and creates nothing. All anonymous callers of an `anonymous: true`
   * mount share one count.
   * @default 100
   */
  tasksPerPrincipal?: number;
}

/** Limits after defaults were applied. */
export type McpResolvedLimits = Required<McpLimitsOptions>;

/** Defaults of `McpLimitsOptions`. */
export const DEFAULT_LIMITS: McpResolvedLimits = {
  sessionsPerPrincipal: 100,
  streamsPerPrincipal: 100,
  listenStreamsPerPrincipal: 100,
  listenResourceSubscriptions: 1000,
  listenTaskIds: 1000,
  subscriptionsPerSession: 1000,
  tasksPerPrincipal: 100,
};

/** JSON-RPC code of an exceeded cap (the implementation-defined server error range). */
export const LIMIT_EXCEEDED_CODE = -32000;
