import { randomBytes, randomUUID } from 'node:crypto';
import type { McpEventInput, McpEventRecord } from './interfaces/mcp-event-sink.interface';
import type { McpHandlerSwitchRecord } from './interfaces/mcp-handler-switch-store.interface';
import type { McpOutboundSessionState } from './interfaces/mcp-outbound-session-store.interface';
import type { McpInboundSessionRecord, McpNewInboundSession } from './interfaces/mcp-session-store.interface';
import type { McpNewTask, McpTaskRecord } from './interfaces/mcp-task-store.interface';
import { MCP_COLUMN_LENGTHS } from './mcp-columns.constants';
import { StorableNotes, storableJson, storableKey, storableString, storableText } from './storable';
import { activeTraceId } from '../telemetry/mcp-spans';

/** A W3C trace id: 32 lower-case hex characters, not all zero. */
const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

/**
 * The row a new 2025-era session gets, whatever store keeps it. The session id is 32 random bytes
 * as base64url: 43 visible ASCII characters, as the transport requires, and unguessable. What
 * the client and the host's authorizer supplied is made storable first (see `storable.ts`); the
 * principal key goes through `storableKey`, which lookups apply too.
 */
export function newInboundSessionRecord(
  mount: string,
  input: McpNewInboundSession,
  now = new Date(),
): McpInboundSessionRecord {
  const notes = new StorableNotes();
  return {
    id: randomUUID(),
    mount,
    sessionId: randomBytes(32).toString('base64url'),
    principalKey: storedPrincipalKey(input.principal.key),
    principalLabel: storableString(input.principal.label, MCP_COLUMN_LENGTHS.principalLabel, 'principal label', notes),
    protocolVersion: storableString(
      input.protocolVersion,
      MCP_COLUMN_LENGTHS.protocolVersion,
      'protocol version',
      notes,
    ),
    clientInfo: storableJson(input.clientInfo, 'client info', notes) as Record<string, unknown> | null,
    clientCapabilities: storableJson(input.clientCapabilities, 'client capabilities', notes) as Record<
      string,
      unknown
    > | null,
    logLevel: null,
    createdAt: now,
    lastSeenAt: now,
    terminatedAt: null,
  };
}

/** The stored form of a principal (or scope) key: the key itself when it fits, otherwise a unique cut (see `storableKey`). */
export function storedPrincipalKey(key: string): string {
  return storableKey(key, MCP_COLUMN_LENGTHS.principalKey);
}

/** The stored form of a handler name in a registry switch: the name itself when it fits, otherwise a unique cut (see `storableKey`). */
export function storedHandlerName(name: string): string {
  return storableKey(name, MCP_COLUMN_LENGTHS.handlerName);
}

/** The rows that switch a handler off for `principalKeys` (or for everyone when null), whatever store keeps them. */
export function newHandlerSwitchRecords(
  mount: string,
  kind: string,
  name: string,
  principalKeys: readonly string[] | null,
  now = new Date(),
): McpHandlerSwitchRecord[] {
  const storedName = storedHandlerName(name);
  const keys = principalKeys === null ? [null] : [...new Set(principalKeys.map(storedPrincipalKey))];
  return keys.map((principalKey) => ({ mount, kind, name: storedName, principalKey, createdAt: now }));
}

/** An outbound session's state as stored: what the remote server sent, made storable. */
export function storableOutboundState(state: McpOutboundSessionState): McpOutboundSessionState {
  const notes = new StorableNotes();
  return {
    ...state,
    remoteSessionId:
      state.remoteSessionId === null
        ? null
        : storableString(state.remoteSessionId, MCP_COLUMN_LENGTHS.remoteSessionId, 'remote session id', notes),
    protocolVersion: storableString(
      state.protocolVersion,
      MCP_COLUMN_LENGTHS.protocolVersion,
      'protocol version',
      notes,
    ),
    serverInfo: storableJson(state.serverInfo, 'server info', notes) as Record<string, unknown> | null,
    serverCapabilities: storableJson(state.serverCapabilities, 'server capabilities', notes) as Record<
      string,
      unknown
    > | null,
    ...(state.endpoint
      ? { endpoint: storableString(state.endpoint, MCP_COLUMN_LENGTHS.endpoint, 'endpoint', notes) }
      : {}),
  };
}

/**
 * An event row: the caller's fields over the defaults every store writes (a fresh id, nulls,
 * `isError: false`, the active span's trace id), every value made storable; a trace id that is
 * not 32 hex characters is dropped. What had to change is said on the row's note,
 * after the caller's note.
 */
export function newEventRecord(event: McpEventInput): McpEventRecord {
  const notes = new StorableNotes();
  const string = (value: string | null | undefined, max: number, field: string) =>
    typeof value === 'string' ? storableString(value, max, field, notes) : (value ?? null);
  const row: McpEventRecord = {
    id: randomUUID(),
    mount: null,
    server: null,
    sessionRef: null,
    principalKey: null,
    method: null,
    protocolVersion: null,
    request: null,
    response: null,
    status: null,
    errorCode: null,
    isError: false,
    note: null,
    ...event,
    traceId: event.traceId === undefined ? activeTraceId() : event.traceId,
  };
  if (row.traceId !== null && !TRACE_ID.test(row.traceId)) row.traceId = null;
  row.mount = string(row.mount, MCP_COLUMN_LENGTHS.mount, 'mount');
  row.server = string(row.server, MCP_COLUMN_LENGTHS.server, 'server');
  row.principalKey = typeof row.principalKey === 'string' ? storedPrincipalKey(row.principalKey) : null;
  row.kind = storableString(row.kind, MCP_COLUMN_LENGTHS.eventKind, 'kind', notes);
  row.method = string(row.method, MCP_COLUMN_LENGTHS.method, 'method');
  row.protocolVersion = string(row.protocolVersion, MCP_COLUMN_LENGTHS.protocolVersion, 'protocol version');
  row.request = storableJson(row.request, 'request', notes);
  row.response = storableJson(row.response, 'response', notes);
  const callerNote = typeof row.note === 'string' ? storableText(row.note, 'note', notes) : null;
  const changes = notes.text();
  row.note = callerNote && changes ? `${callerNote}\n${changes}` : (callerNote ?? changes);
  return row;
}

/** The row a new task gets, whatever store keeps it: `working`, never claimed, expiring `ttlMs` after `now`. */
export function newTaskRecord(mount: string, task: McpNewTask, now = new Date()): McpTaskRecord {
  return {
    ...task,
    mount,
    principalKey: storedPrincipalKey(task.principalKey),
    status: 'working',
    outcome: null,
    createdAt: now,
    updatedAt: now,
    expiresAt: task.ttlMs === null ? null : new Date(now.getTime() + task.ttlMs),
    startedAt: null,
    worker: null,
    attempt: 0,
  };
}
