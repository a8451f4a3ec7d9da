import { randomBytes, randomUUID } from 'node:crypto';
import type { McpEventInput } from './interfaces/mcp-event-sink.interface';
import type { McpInboundSessionRecord, McpNewInboundSession } from './interfaces/mcp-session-store.interface';

/**
 * The row a new 2025-era session gets, whatever store keeps it. The session id is 32 random bytes
 * as base64url: 43 visible ASCII characters, as the transport requires, and unguessable.
 */
export function newInboundSessionRecord(mount: string, input: McpNewInboundSession, now = new Date()): McpInboundSessionRecord {
  return {
    id: randomUUID(),
    mount,
    sessionId: randomBytes(32).toString('base64url'),
    principalKey: input.principal.key,
    principalLabel: input.principal.label,
    protocolVersion: input.protocolVersion,
    clientInfo: input.clientInfo,
    clientCapabilities: input.clientCapabilities,
    logLevel: null,
    createdAt: now,
    lastSeenAt: now,
    terminatedAt: null,
  };
}

/** An event row: the caller's fields over the defaults every store writes (a fresh id, nulls, `isError: false`). */
export function newEventRecord<T extends McpEventInput>(event: T) {
  return {
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
  };
}
