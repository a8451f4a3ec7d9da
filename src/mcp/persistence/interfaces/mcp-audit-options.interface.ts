/** How audit rows (`mcp_events`) are written: a mount's inbound rows (`McpModule`), the client's outbound rows (`McpClientModule`). */
export interface McpAuditOptions {
  /**
   * How the transaction of each group-committed batch of rows commits on PostgreSQL. Either way
   * a response is sent only after the commit that holds its row: the row is visible to every
   * reader. `'sync'` also waits for the WAL flush to disk. `'async'` commits the batch with
   * `synchronous_commit` off for that transaction alone: the flush is left to the WAL writer and
   * shared by every batch in between. If the PostgreSQL server crashes (or its machine loses
   * power), the rows of the transactions it committed in the last three times `wal_writer_delay`
   * before the crash (600 ms with the default 200 ms) may be lost; the database stays consistent.
   * A crash of this app loses nothing more than in `'sync'` mode. Other databases (SQLite)
   * commit the same way in both modes.
   * @default 'sync'
   */
  commit?: 'sync' | 'async';
}
