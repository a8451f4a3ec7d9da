import type { McpPrincipal } from './principal.interface';

/**
 * The second argument of every `@McpTool` handler: who is calling, on which session and mount,
 * and a signal that aborts when the client cancels the request or goes away.
 */
export interface McpToolContext {
  /** The authenticated caller. */
  principal: McpPrincipal;
  /** The MCP session id, or null when the request carried none (in-process or stateless). */
  sessionId: string | null;
  /** Name of the mount serving the call. */
  mount: string;
  /** The protocol revision of the session. */
  protocolVersion: string;
  /** The JSON-RPC id of the `tools/call` request. */
  requestId: string | number;
  /** Aborts on `notifications/cancelled` for this request or when the HTTP client disconnects. */
  signal: AbortSignal;
  /** The `_meta` object the client sent with the request, if any. */
  meta?: Record<string, unknown>;
}

/** One content block of a tool result. */
export type McpContent =
  | { type: 'text'; text: string; annotations?: Record<string, unknown>; _meta?: Record<string, unknown> }
  | { type: 'image'; data: string; mimeType: string; annotations?: Record<string, unknown>; _meta?: Record<string, unknown> }
  | { type: 'audio'; data: string; mimeType: string; annotations?: Record<string, unknown>; _meta?: Record<string, unknown> }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string; [key: string]: unknown }
  | { type: 'resource'; resource: Record<string, unknown>; annotations?: Record<string, unknown>; _meta?: Record<string, unknown> };

/** A complete `tools/call` result. */
export interface McpCallToolResult {
  content: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * What a tool handler may return: a string (one text block), an array of content blocks, a full
 * `CallToolResult` (recognised by its `content` array), or, for a tool with `output`, the
 * structured object itself.
 */
export type McpToolReturn = string | McpContent[] | McpCallToolResult | Record<string, unknown>;
