import type { JsonRpcNotification } from '../protocol/jsonrpc';

/** Injection token of the session notifier of a mount. */
export const MCP_SESSION_NOTIFIER = 'MCP_SESSION_NOTIFIER';

/**
 * Sends notifications that belong to a session rather than to one request (resource updates,
 * list changes) to whichever replica holds that session's open GET stream.
 */
export interface McpSessionNotifier {
  /** Delivers `notification` on the session's stream; resolves once it was handed to the carrier. */
  notifySession(sessionId: string, notification: JsonRpcNotification): Promise<void>;
}
