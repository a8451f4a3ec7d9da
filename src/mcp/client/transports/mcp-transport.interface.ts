import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc';

/**
 * Answers a request the server sends to the client during a call (ping, roots/list,
 * sampling/createMessage, elicitation/create). Resolves to the JSON-RPC result; rejects with an
 * `McpRpcError` to answer with a JSON-RPC error (-32601 when nothing handles the method).
 */
export type McpServerRequestHandler = (request: JsonRpcRequest) => Promise<Record<string, unknown>>;

/**
 * Where a notification arrived: `request` on the call's own channel (the POST's SSE stream, a
 * stdio server's output while it serves the call), `session` on a channel the call shares with
 * others (a 2025 session's standalone GET stream). Log messages count as the call's only when
 * they came on its own channel.
 */
export type McpNotificationOrigin = 'request' | 'session';

/** Receives notifications the server sends during a call (progress, logging, list_changed...). */
export type McpServerNotificationHandler = (notification: JsonRpcNotification, origin?: McpNotificationOrigin) => void;

/** Per-call context a transport receives. */
export interface McpTransportContext {
  /** Name of the configured server, for messages and event rows. */
  server: string;
  /** Who the call is made for (a principal key, or '' when shared): scopes remote sessions. */
  scopeKey: string;
  /** Overall deadline of this deliver, in ms (spawn and handshake included). */
  timeoutMs: number;
  /**
   * The caller's absolute deadline (`Date.now()` ms), which spans every attempt of the call. A
   * transport stops at whichever of `timeoutMs` and `deadlineAt` comes first, and reports
   * `timeoutMs` in its `McpTimeoutError`.
   * @default no absolute deadline: `timeoutMs` alone
   */
  deadlineAt?: number;
  /**
   * Called with what a handshake performed inside this deliver learned, before the message is
   * sent. Throwing (e.g. `McpCapabilityError` for a method the server did not declare) refuses
   * the message: the deliver rejects with that error, and the message counts as not delivered.
   */
  onHandshake?: (handshake: McpHandshakeInfo) => void;
  /** Aborts the call; the transport sends notifications/cancelled when the request was sent. */
  signal?: AbortSignal;
  /** Answers server->client requests. Without it, every such request gets -32601. */
  onServerRequest?: McpServerRequestHandler;
  /**
   * The client capabilities a handshake made for this deliver alone (a spawn-per-call stdio
   * process) announces, when the call answers more than the app-wide handlers do.
   */
  clientCapabilities?: Record<string, unknown>;
  /** Receives server notifications. */
  onNotification?: McpServerNotificationHandler;
  /**
   * Told of each `notifications/cancelled` the transport sent for the message after a timeout or
   * an abort, with the error of that send if it failed (for the audit row of the notice).
   */
  onCancelNotice?: (notice: JsonRpcNotification, error?: unknown) => void;
}

/** Options of one `deliver` call. */
export interface McpTransportDeliverOptions {
  /** The remote session to continue (HTTP), or null to start one when needed. */
  sessionId: string | null;
  /** The negotiated protocol revision of that session, when known (the stateless revision when `stateless`). */
  protocolVersion?: string | null;
  /**
   * Send the message as a stateless (2026-07-28) request: it already carries its `_meta`
   * envelope; no handshake, no session id; HTTP adds `MCP-Protocol-Version`, `Mcp-Method` and
   * `Mcp-Name`. A JSON-RPC error answered with an HTTP 4xx comes back as `body`.
   */
  stateless?: boolean;
  /** HTTP headers of this request only, e.g. the `Mcp-Param-*` headers of a stateless `tools/call`; other transports ignore them. */
  headers?: Record<string, string>;
  /** Per-call context. */
  context: McpTransportContext;
}

/** What the handshake of a transport learned about the server. */
export interface McpHandshakeInfo {
  /** The protocol revision the server agreed to. */
  protocolVersion: string;
  /** The server's `serverInfo` (name, version...), or null when it sent none. */
  serverInfo: Record<string, unknown> | null;
  /** The capabilities the server declared, or null when it sent none. */
  capabilities: Record<string, unknown> | null;
  /** The server's instructions for the model, when it gave some. */
  instructions?: string;
}

/** The outcome of one `deliver`. */
export interface McpTransportResult {
  /** The JSON-RPC response to the message; null for a notification. */
  body: JsonRpcResponse | null;
  /** The remote session id after the exchange (HTTP), or null. */
  sessionId: string | null;
  /** The handshake performed during this deliver (stdio spawn, HTTP (re-)initialize), if any. */
  handshake?: McpHandshakeInfo;
  /** What was written for the message, as sent (one JSON text). */
  rawRequest: string;
  /** What was read back for it, as received (JSON text, or the SSE stream), or null. */
  rawResponse: string | null;
  /** HTTP status, or null for transports without one. */
  status: number | null;
  /** Captured stderr of a child process (capped), or ''. */
  stderr: string;
}

/**
 * One way to reach an MCP server. Every transport has this one method, so the queue processor,
 * the event log and the retry rules do not care how a server is reached. Failures reject with the
 * typed errors of `errors/mcp-client.errors.ts`, whose `delivered` flag tells whether a retry
 * could deliver the message twice.
 */
export interface McpTransport {
  /** Sends one request or notification and returns its outcome. */
  deliver(
    message: JsonRpcRequest | JsonRpcNotification,
    options: McpTransportDeliverOptions,
  ): Promise<McpTransportResult>;
  /** Ends a remote session (HTTP DELETE) if the transport has one. */
  closeSession?(sessionId: string, context: McpTransportContext): Promise<void>;
  /** Releases processes, sockets and timers held by the transport. */
  close?(): Promise<void>;
}
