import type { McpLogLevel } from '../../protocol/log-levels';
import type { McpPrincipal } from '../../interfaces/principal.interface';

/** One 2025-era session served by a mount, as a store keeps it. */
export interface McpInboundSessionRecord {
  /** Row id (UUID); event rows refer to it as `sessionRef`. */
  id: string;
  /** The mount that created the session. */
  mount: string;
  /** The `Mcp-Session-Id` sent to the client: crypto-random, visible ASCII. */
  sessionId: string;
  /** Key of the principal the session is bound to. */
  principalKey: string;
  /** Human-readable label of that principal. */
  principalLabel: string;
  /** The negotiated protocol revision. */
  protocolVersion: string;
  /** `clientInfo` from initialize. */
  clientInfo: Record<string, unknown> | null;
  /** `capabilities` from initialize. */
  clientCapabilities: Record<string, unknown> | null;
  /** Least severe level of `notifications/message` the client asked for; null: none. */
  logLevel: McpLogLevel | null;
  /** When initialize created the session. */
  createdAt: Date;
  /** Last time a request used the session (a store may refresh it lazily, e.g. once a second). */
  lastSeenAt: Date;
  /** When the client (or expiry) ended the session; null while it is open. */
  terminatedAt: Date | null;
}

/** What `initialize` knows when it opens a session. */
export interface McpNewInboundSession {
  /** The principal the session is bound to. */
  principal: McpPrincipal;
  /** The negotiated protocol revision. */
  protocolVersion: string;
  /** `clientInfo` from initialize. */
  clientInfo: Record<string, unknown> | null;
  /** `capabilities` from initialize. */
  clientCapabilities: Record<string, unknown> | null;
}

/**
 * The 2025-era sessions of one mount (the mount and the idle TTL come from the store settings).
 * A session is found only by its mount, id and principal together: unknown, terminated, idle,
 * other-mount and other-principal sessions are all the same "not found", so a caller cannot
 * tell whether someone else's session exists.
 */
export interface McpSessionStore {
  /** Opens a session bound to the mount and the principal, with a fresh random session id. */
  open(input: McpNewInboundSession): Promise<McpInboundSessionRecord>;
  /**
   * The live session with this id on this mount for this principal, or null. Finding a session
   * counts as using it (refreshes `lastSeenAt`); a session found idle is ended.
   */
  find(sessionId: string, principal: McpPrincipal): Promise<McpInboundSessionRecord | null>;
  /** Stores the least severe log level the client wants on its session (`logging/setLevel`). */
  setLogLevel(sessionId: string, principal: McpPrincipal, level: McpLogLevel): Promise<void>;
  /** Ends a session (DELETE); stores may keep the record as an audit trail. */
  terminate(session: McpInboundSessionRecord): Promise<void>;
  /**
   * How many live (not terminated, not idle) sessions the principal holds on the mount, across
   * every replica: `initialize` refuses a new one at the `limits.sessionsPerPrincipal` cap.
   */
  countOpen(principal: McpPrincipal): Promise<number>;
  /**
   * Optional: records that these sessions were used at `seenAt`, many sessions in one write.
   * The mount's session cache calls it for sessions it served without `find`, at most once per
   * session per touch interval; a store should not move `lastSeenAt` backwards and should leave
   * terminated and idle sessions as they are. Without it, the cache calls `find` instead.
   */
  touch?(sessions: McpInboundSessionRecord[], seenAt: Date): Promise<void>;
}
