/**
 * JSON-RPC 2.0 envelopes as MCP uses them, and the one place a raw body is classified.
 * Pure TypeScript: nothing here knows about Nest, HTTP or a database.
 */
import { MAX_JSON_RPC_DEPTH, jsonNestsDeeperThan } from './json-depth';

/** A JSON-RPC request or notification id. */
export type JsonRpcId = string | number;

/** A JSON-RPC request: has an id and expects exactly one response. */
export interface JsonRpcRequest {
  /** The protocol version, always `'2.0'`. */
  jsonrpc: '2.0';
  /** The id the response echoes. */
  id: JsonRpcId;
  /** The method called, e.g. `tools/call`. */
  method: string;
  /** The method's parameters, when it takes any. */
  params?: Record<string, unknown>;
}

/** A JSON-RPC notification: has no id and gets no response. */
export interface JsonRpcNotification {
  /** The protocol version, always `'2.0'`. */
  jsonrpc: '2.0';
  /** The notification's method, e.g. `notifications/progress`. */
  method: string;
  /** The notification's parameters, when it has any. */
  params?: Record<string, unknown>;
}

/** The error object of a JSON-RPC error response. */
export interface JsonRpcErrorObject {
  /** The error code (see `JsonRpcErrorCode`; MCP adds its own, e.g. -32002). */
  code: number;
  /** A short description of the error. */
  message: string;
  /** Further details, as the server chose to send them. */
  data?: unknown;
}

/** A successful JSON-RPC response. */
export interface JsonRpcSuccess {
  /** The protocol version, always `'2.0'`. */
  jsonrpc: '2.0';
  /** The id of the request this answers. */
  id: JsonRpcId;
  /** The method's result. */
  result: Record<string, unknown>;
}

/** A JSON-RPC error response; `id` is null when the request's id could not be read. */
export interface JsonRpcError {
  /** The protocol version, always `'2.0'`. */
  jsonrpc: '2.0';
  /** The id of the request this answers, or null when it could not be read. */
  id: JsonRpcId | null;
  /** What went wrong. */
  error: JsonRpcErrorObject;
}

/** Any JSON-RPC response. */
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcError;

/** Any single JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Standard JSON-RPC error codes used by MCP. */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

/** What a raw body turned out to be, decided once at the edge. */
export type ClassifiedMessage =
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'invalid'; error: JsonRpcError };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Builds a JSON-RPC error response. */
export function jsonRpcError(id: JsonRpcId | null, code: number, message: string, data?: unknown): JsonRpcError {
  const error: JsonRpcErrorObject = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

/** Builds a JSON-RPC success response. */
export function jsonRpcResult(id: JsonRpcId, result: Record<string, unknown>): JsonRpcSuccess {
  return { jsonrpc: '2.0', id, result };
}

/**
 * Parses a raw body into one classified JSON-RPC message. Never throws: malformed input becomes
 * an `invalid` classification carrying the JSON-RPC error to answer with.
 */
export function parseJsonRpc(raw: string): ClassifiedMessage {
  if (jsonNestsDeeperThan(raw, MAX_JSON_RPC_DEPTH)) {
    return {
      kind: 'invalid',
      error: jsonRpcError(
        null,
        JsonRpcErrorCode.InvalidRequest,
        `Invalid Request: the message nests arrays and objects deeper than ${MAX_JSON_RPC_DEPTH} levels`,
      ),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return {
      kind: 'invalid',
      error: jsonRpcError(null, JsonRpcErrorCode.ParseError, 'Parse error: the body is not valid JSON'),
    };
  }
  return classifyJsonRpc(value);
}

/** Classifies an already-parsed value as one JSON-RPC message. */
export function classifyJsonRpc(value: unknown): ClassifiedMessage {
  if (Array.isArray(value)) {
    return {
      kind: 'invalid',
      error: jsonRpcError(
        null,
        JsonRpcErrorCode.InvalidRequest,
        'Invalid Request: JSON-RPC batches are not supported; send one message per request',
      ),
    };
  }
  if (!isPlainObject(value) || value.jsonrpc !== '2.0') {
    return {
      kind: 'invalid',
      error: jsonRpcError(null, JsonRpcErrorCode.InvalidRequest, 'Invalid Request: expected a JSON-RPC 2.0 object'),
    };
  }
  const hasId = 'id' in value && value.id !== undefined;
  if (hasId && !isId(value.id)) {
    return {
      kind: 'invalid',
      error: jsonRpcError(null, JsonRpcErrorCode.InvalidRequest, 'Invalid Request: id must be a string or a number'),
    };
  }
  const id = hasId ? (value.id as JsonRpcId) : null;
  if (typeof value.method === 'string') {
    if (value.params !== undefined && !isPlainObject(value.params)) {
      return {
        kind: 'invalid',
        error: jsonRpcError(id, JsonRpcErrorCode.InvalidRequest, 'Invalid Request: params must be an object'),
      };
    }
    return hasId
      ? { kind: 'request', message: value as unknown as JsonRpcRequest }
      : { kind: 'notification', message: value as unknown as JsonRpcNotification };
  }
  if (hasId && ('result' in value || isPlainObject(value.error))) {
    return { kind: 'response', message: value as unknown as JsonRpcResponse };
  }
  return {
    kind: 'invalid',
    error: jsonRpcError(
      id,
      JsonRpcErrorCode.InvalidRequest,
      'Invalid Request: a message needs a method, or an id with a result or an error',
    ),
  };
}
