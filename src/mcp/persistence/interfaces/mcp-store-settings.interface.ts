/**
 * What the stores of one mount need from its configuration, provided by the module wiring under
 * `MCP_STORE_SETTINGS` (persistence does not read the module options itself). `McpClientModule`
 * provides one too, to its own stores: there `mount` is `''` and `auditCommit` comes from the
 * client's `audit` option.
 */
export interface McpStoreSettings {
  /** The mount the stores serve: sessions and subscriptions are bound to it. */
  mount: string;
  /** A session not used for this long is ended and no longer found. */
  idleTtlMs: number;
  /**
   * Bound of one database operation; past it the store rejects with
   * `McpDatabaseUnavailableError`.
   * @default 5000
   */
  databaseTimeoutMs?: number;
  /**
   * How the event sink commits its batches of audit rows (the module's `audit.commit`): `async`
   * turns PostgreSQL's `synchronous_commit` off for those transactions.
   * @default 'sync'
   */
  auditCommit?: 'sync' | 'async';
}
