/** The client side of a remote session, as a store keeps it (one per server and scope key). */
export interface McpOutboundSessionRecord {
  /** Row id (UUID); outbound event rows refer to it as `sessionRef`. */
  id: string;
  /** Name of the configured server. */
  server: string;
  /** Who the session belongs to on our side (a principal key, or `''` for shared). */
  scopeKey: string;
  /** The remote `Mcp-Session-Id`, when the server issued one. */
  remoteSessionId: string | null;
  /** The negotiated protocol revision (the era verdict of `endpoint`). */
  protocolVersion: string;
  /** The server's `serverInfo`. */
  serverInfo: Record<string, unknown> | null;
  /** The server's capabilities. */
  serverCapabilities: Record<string, unknown> | null;
  /** The endpoint (HTTP URL, or stdio argv and cwd) the session was established with; null when unknown. */
  endpoint?: string | null;
  /** When the session was established. */
  createdAt: Date;
  /** When the record last changed. */
  updatedAt: Date;
  /** When the session was closed; null while open. */
  closedAt: Date | null;
}

/** What a handshake (or a continued exchange) tells about a remote session. */
export interface McpOutboundSessionState {
  /** The remote `Mcp-Session-Id`, when the server issued one. */
  remoteSessionId: string | null;
  /** The negotiated protocol revision. */
  protocolVersion: string;
  /** The server's `serverInfo`; null keeps the stored one. */
  serverInfo: Record<string, unknown> | null;
  /** The server's capabilities; null keeps the stored ones. */
  serverCapabilities: Record<string, unknown> | null;
  /** The endpoint the session was established with; null or absent keeps the stored one. */
  endpoint?: string | null;
}

/**
 * The client's remote sessions, keyed by (server, scope key) and shared by every worker, so a
 * call on any worker continues the session another worker opened.
 */
export interface McpOutboundSessionStore {
  /** The open session of a server and scope, or null. */
  find(server: string, scopeKey: string): Promise<McpOutboundSessionRecord | null>;
  /**
   * The most recently updated open session of a server at an endpoint, by any scope key: its
   * `protocolVersion` is the era verdict another worker (or an earlier run) already reached.
   */
  findVersion(server: string, endpoint: string): Promise<McpOutboundSessionRecord | null>;
  /**
   * Inserts or replaces the session of a server and scope atomically, reopening a closed one;
   * returns its id (kept when the record already existed).
   */
  save(server: string, scopeKey: string, state: McpOutboundSessionState): Promise<string>;
  /** Marks the open session of a server and scope closed. */
  close(server: string, scopeKey: string): Promise<void>;
}
