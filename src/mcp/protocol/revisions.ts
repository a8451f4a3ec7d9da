/** MCP protocol revisions this package speaks, newest first, and version negotiation. */

/** The session (handshake) revisions served, newest first. */
export const SESSION_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** The latest session revision: what we answer when a client asks for one we do not speak. */
export const LATEST_SESSION_PROTOCOL_VERSION = SESSION_PROTOCOL_VERSIONS[0];

/** True when `version` is a session revision this package serves. */
export function isSupportedSessionVersion(version: unknown): version is string {
  return typeof version === 'string' && (SESSION_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/**
 * Picks the revision for a new session: the client's when we speak it, else our latest (the
 * client then decides whether it can continue).
 */
export function negotiateProtocolVersion(requested: unknown): string {
  return isSupportedSessionVersion(requested) ? requested : LATEST_SESSION_PROTOCOL_VERSION;
}
