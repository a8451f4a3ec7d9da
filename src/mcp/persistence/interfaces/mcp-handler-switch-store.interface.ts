/**
 * One switch of `McpRegistry`: a handler of a mount turned off for everyone (`principalKey` null)
 * or for one principal, as a store keeps it. The shipped stores keep a name or principal key that
 * does not fit its column (`MCP_COLUMN_LENGTHS.handlerName`, `.principalKey`) as a unique cut
 * ending in `#` and a SHA-256 of the value, as they do for session principal keys; the registry
 * matches either form.
 */
export interface McpHandlerSwitchRecord {
  /** The mount serving the handler. */
  mount: string;
  /** `'tool'`, `'prompt'`, `'resource'` or `'resourceTemplate'`. */
  kind: string;
  /** The tool or prompt name, the resource URI or the template string. */
  name: string;
  /** The principal the handler is off for; null when it is off for everyone. */
  principalKey: string | null;
  /** When the switch was made. */
  createdAt: Date;
}

/**
 * The handlers `McpRegistry` switched off on one mount. Shared by every replica and durable: a
 * replica that was down during a change reads it when it boots; the bus only announces changes.
 * Each write is one statement, so replicas changing switches at once never undo each other.
 */
export interface McpHandlerSwitchStore {
  /** Every switch of the mount, in no particular order. */
  list(): Promise<McpHandlerSwitchRecord[]>;
  /**
   * Turns a handler off for `principalKeys`, or for everyone when null. A switch already on is
   * kept as it is.
   */
  disable(kind: string, name: string, principalKeys: readonly string[] | null): Promise<void>;
  /**
   * Lifts the switches of `principalKeys` (their own only), or with null every switch of the
   * handler (for everyone and per principal). A no-op where there is none.
   */
  enable(kind: string, name: string, principalKeys: readonly string[] | null): Promise<void>;
}
