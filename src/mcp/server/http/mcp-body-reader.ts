import type { NextFunction, Request, Response } from 'express';
import { TRANSPORT_ERROR_CODE, sendRpcError } from './mcp-http-responses';

/** What the body reader found, kept on the request for the controller. */
export type McpRawBody = { ok: true; text: string } | { ok: false; reason: 'aborted' };

/** The request property the raw body is stored under. */
export const MCP_RAW_BODY = Symbol('mcp:raw-body');

/** A request that went through the body reader. */
export type McpRequest = Request & { [MCP_RAW_BODY]?: McpRawBody };

function refuseTooLarge(res: Response, limit: number): void {
  // The rest of the body is not read: close the connection once the answer is out.
  res.setHeader('Connection', 'close');
  sendRpcError(res, 413, TRANSPORT_ERROR_CODE, `Payload Too Large: the body exceeds ${limit} bytes`);
}

/**
 * Reads the raw body of POSTs to MCP paths, up to a limit, before the app's body parsers see
 * them: the endpoint must answer bad JSON with a JSON-RPC -32700 and an oversized body with 413
 * under its own limit, whatever the host's parser settings are. A body over the limit is refused
 * here, before authentication, without reading the rest of it. A fully read request stream is
 * what makes the app's parsers skip the request.
 */
export function createMcpBodyReader(limitFor: (path: string) => number | null) {
  return function mcpBodyReader(req: McpRequest, res: Response, next: NextFunction): void {
    const limit = req.method === 'POST' ? limitFor(req.path) : null;
    if (limit === null) return next();
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return refuseTooLarge(res, limit);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const settle = () => {
      done = true;
      req.off('data', onData);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      settle();
      req.pause();
      refuseTooLarge(res, limit);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (done) return;
      settle();
      req[MCP_RAW_BODY] = { ok: true, text: Buffer.concat(chunks, size).toString('utf8') };
      next();
    });
    const onAbort = () => {
      if (done) return;
      settle();
      req[MCP_RAW_BODY] = { ok: false, reason: 'aborted' };
      next();
    };
    req.once('error', onAbort);
    req.once('aborted', onAbort);
  };
}
