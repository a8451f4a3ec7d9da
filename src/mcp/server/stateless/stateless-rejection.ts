import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { StatelessErrorCode } from '../../protocol/stateless';

/** A stateless request refused before (or instead of) reaching the toolset. */
export interface StatelessRejection {
  /** HTTP status of the answer. */
  status: number;
  /** JSON-RPC error code. */
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The HTTP status the stateless revision gives a JSON-RPC error: 404 for an unknown method, 400
 * for the protocol errors the specification pins to it, 200 for every other error response
 * (the exchange itself worked; the JSON-RPC body says what failed).
 */
export function httpStatusForError(code: number): number {
  switch (code) {
    case JsonRpcErrorCode.MethodNotFound:
      return 404;
    case JsonRpcErrorCode.InvalidRequest:
    case StatelessErrorCode.HeaderMismatch:
    case StatelessErrorCode.MissingRequiredClientCapability:
    case StatelessErrorCode.UnsupportedProtocolVersion:
      return 400;
    default:
      return 200;
  }
}

/** A `-32602` refusal of a malformed request envelope (HTTP 400, as the specification requires). */
export function invalidEnvelope(message: string): StatelessRejection {
  return { status: 400, code: JsonRpcErrorCode.InvalidParams, message: `Invalid params: ${message}` };
}

/** A `-32020` refusal: the routing headers do not match the body, or are missing or malformed. */
export function headerMismatch(message: string): StatelessRejection {
  return { status: 400, code: StatelessErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` };
}
