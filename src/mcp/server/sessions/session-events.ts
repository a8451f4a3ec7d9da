import type { McpEventInput } from '../../persistence/interfaces/mcp-event-sink.interface';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';

/**
 * The audit row of one exchange on a 2025 session, whichever transport carried it (Streamable
 * HTTP or stdio): bound to the session and its principal, timed from `startedAt`.
 */
export function sessionEvent(
  mount: string,
  session: McpInboundSessionRecord,
  startedAt: Date,
  fields: Partial<McpEventInput> & Pick<McpEventInput, 'kind'>,
): McpEventInput {
  return {
    direction: 'inbound',
    mount,
    sessionRef: session.id,
    principalKey: session.principalKey,
    protocolVersion: session.protocolVersion,
    createdAt: startedAt,
    durationMs: Date.now() - startedAt.getTime(),
    ...fields,
  };
}
