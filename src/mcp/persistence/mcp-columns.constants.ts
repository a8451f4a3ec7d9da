/**
 * Widths of the varchar columns of the package's tables, in characters. The entities declare
 * their columns with these, and code that refuses or trims a value before it reaches a column
 * (subscription URIs, revision strings, server names, endpoint keys) checks against them, so a
 * width lives in one place.
 *
 * The migrations keep their literal widths on purpose: they record the schema as shipped. If a
 * width here changes, the migrations e2e suite (entities against migrated PostgreSQL) fails
 * until a new migration widens the column in databases that already exist.
 */
export const MCP_COLUMN_LENGTHS = {
  /** Row ids (UUIDs) and references to them (`session_ref`). */
  rowId: 36,
  /** Mount names. */
  mount: 128,
  /** `Mcp-Session-Id` values this server issues. */
  sessionId: 128,
  /** Principal keys (and the scope keys of outbound sessions). */
  principalKey: 255,
  /** Human-readable principal labels. */
  principalLabel: 255,
  /** Protocol revision strings. */
  protocolVersion: 32,
  /** `logging/setLevel` levels. */
  logLevel: 16,
  /** Event direction (`inbound` / `outbound`). */
  eventDirection: 8,
  /** Event kind (`request`, `notification`, `response`, `terminate`). */
  eventKind: 16,
  /** JSON-RPC method names. */
  method: 255,
  /** Names of configured remote servers. */
  server: 128,
  /** Remote `Mcp-Session-Id` values. */
  remoteSessionId: 255,
  /** Endpoint keys of outbound sessions (URL or stdio program). */
  endpoint: 255,
  /** Resource URIs a session subscribes to. */
  subscriptionUri: 2048,
  /** Handler kinds of registry switches (`tool`, `prompt`, `resource`, `resourceTemplate`). */
  handlerKind: 16,
  /** Handler names of registry switches: tool and prompt names, resource URIs, URI templates. */
  handlerName: 1024,
  /** Tool names (the specification's pattern allows 128 characters). */
  toolName: 128,
  /** Task ids (base64url of random bytes). */
  taskId: 64,
  /** Task statuses (`working`, `input_required`, `completed`, `failed`, `cancelled`). */
  taskStatus: 16,
  /** SHA-256 digests as hex. */
  digest: 64,
  /** Ids of the workers that claim tasks. */
  worker: 64,
  /** OpenTelemetry trace ids (32 lower-case hex characters). */
  traceId: 32,
} as const;
