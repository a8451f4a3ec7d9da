import type { ServerResponse } from 'node:http';
import { jsonRpcError, type JsonRpcId } from '../../protocol/jsonrpc';

/** JSON-RPC code used for transport-level refusals (bad headers, wrong media type). */
export const TRANSPORT_ERROR_CODE = -32000;

/** JSON-RPC code used when a session does not exist for the caller. */
export const SESSION_NOT_FOUND_CODE = -32001;

/** Sends already-serialized JSON with a status. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  json: string,
  headers?: Record<string, string>,
): void {
  // One writeHead with every header (merged with any a middleware set before): Node formats the
  // head from them at once instead of keeping each in its header map first.
  const length = String(Buffer.byteLength(json));
  res.writeHead(
    status,
    headers
      ? { 'Content-Type': 'application/json', 'Content-Length': length, ...headers }
      : { 'Content-Type': 'application/json', 'Content-Length': length },
  );
  res.end(json);
}

/** Sends a JSON body with a status. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Sends a JSON-RPC error body with an HTTP status. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
): void {
  sendJson(res, status, jsonRpcError(id, code, message));
}

/**
 * 429 for an exceeded cap of `limits`: a JSON-RPC error naming the limit and its value, so a
 * client can tell which resource it holds too many of.
 */
export function sendLimitExceeded(
  res: ServerResponse,
  limit: string,
  max: number,
  message: string,
  id: JsonRpcId | null = null,
): void {
  sendJson(res, 429, jsonRpcError(id, TRANSPORT_ERROR_CODE, message, { limit, max }));
}

/** The methods the endpoint serves, for `Allow`. */
const MCP_ALLOWED_METHODS = 'GET, POST, DELETE';

/** 405 with the methods the endpoint serves. */
export function sendMethodNotAllowed(res: ServerResponse): void {
  sendEmpty(res, 405, { Allow: MCP_ALLOWED_METHODS });
}

/** Sends a status with no body (and the given headers). */
export function sendEmpty(res: ServerResponse, status: number, headers?: Record<string, string>): void {
  res.statusCode = status;
  if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end();
}

/**
 * 503 while the app drains: a JSON-RPC error with `Retry-After`, and `Connection: close` so the
 * client's next attempt opens a connection that may reach another replica.
 */
export function sendDraining(res: ServerResponse, retryAfterMs: number, id: JsonRpcId | null = null): void {
  res.setHeader('Retry-After', String(Math.ceil(retryAfterMs / 1000)));
  res.setHeader('Connection', 'close');
  sendRpcError(
    res,
    503,
    TRANSPORT_ERROR_CODE,
    'Service unavailable: the server is shutting down; retry, another replica will answer',
    id,
  );
}
