import { JsonRpcErrorCode, jsonRpcError, type JsonRpcMessage, type JsonRpcResponse } from '../../protocol/jsonrpc';
import type { McpInFlightRequest } from './mcp-drain.service';

/** The audit note of a request aborted at the drain deadline. */
export const SHUTDOWN_AUDIT_NOTE = 'Aborted at shutdown: the request ran past shutdown.drainTimeoutMs';

/**
 * The handling of a request, or, when the drain had to force it (aborted at the deadline and
 * still running after its grace), a JSON-RPC error saying the server shut down: the endpoint then
 * records and sends that answer instead of waiting for a handler that ignores its signal.
 */
export function abortedAtShutdown(
  inFlight: McpInFlightRequest | null | undefined,
  message: JsonRpcMessage,
  work: Promise<JsonRpcResponse | null>,
): Promise<JsonRpcResponse | null> {
  if (!inFlight) return work;
  return new Promise((resolve, reject) => {
    inFlight.whenForced(() => resolve(forcedAnswer(message)));
    work.then(resolve, reject);
  });
}

/** What a forced request answers: an internal error for a request, nothing for the rest. */
function forcedAnswer(message: JsonRpcMessage): JsonRpcResponse | null {
  if (!('id' in message && 'method' in message)) return null;
  return jsonRpcError(
    message.id,
    JsonRpcErrorCode.InternalError,
    'The server shut down before the request finished: it was aborted',
  );
}
