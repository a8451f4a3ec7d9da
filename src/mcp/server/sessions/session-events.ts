import type { McpEventInput } from '../../persistence/interfaces/mcp-event-sink.interface';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { JsonText } from '../../persistence/json-text';
import type { JsonRpcResponse } from '../../protocol/jsonrpc';
import { httpStatusOf } from '../config/limit-exceeded.errors';
import { auditNoteOf } from '../pipeline/handler-refusal';
import { SHUTDOWN_AUDIT_NOTE } from '../shutdown/shutdown-answers';

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

/** The outcome fields of a session exchange's audit row, as `exchangeOutcome` derives them. */
export type McpExchangeOutcome = Required<Pick<McpEventInput, 'response' | 'errorCode' | 'isError' | 'note'>> & {
  status: number;
};

/**
 * What the audit row of an answered session exchange says of its outcome, whichever transport
 * carried it: the answer's text, its status (202 for a notification or response, 429 and the like
 * for an exceeded cap a handler found, 200 once an SSE stream began, since its status is sent),
 * the JSON-RPC error code, the tool's `isError`, and the note (the shutdown's when the drain
 * deadline cut the call, else the handler's refusal note).
 */
export function exchangeOutcome(
  response: JsonRpcResponse | null,
  json: string | null,
  { shutdown, streaming }: { shutdown: boolean; streaming: boolean },
): McpExchangeOutcome {
  return {
    response: json === null ? null : new JsonText(json),
    status: response ? (streaming ? 200 : (httpStatusOf(response) ?? 200)) : 202,
    errorCode: response && 'error' in response ? response.error.code : null,
    isError: !!response && 'result' in response && response.result.isError === true,
    note: shutdown ? SHUTDOWN_AUDIT_NOTE : auditNoteOf(response),
  };
}
