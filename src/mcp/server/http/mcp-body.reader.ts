import type { NextFunction, Request, Response } from 'express';

/** What the body reader found, kept on the request for the controller. */
export type McpRawBody = { ok: true; text: string } | { ok: false; reason: 'too-large' | 'aborted' };

/** The request property the raw body is stored under. */
export const MCP_RAW_BODY = Symbol('mcp:raw-body');

/** A request that went through the body reader. */
export type McpRequest = Request & { [MCP_RAW_BODY]?: McpRawBody; _body?: boolean };

/**
 * Reads the raw body of POSTs to MCP paths, up to a limit, before the app's JSON parser sees
 * them: the endpoint must answer bad JSON with a JSON-RPC -32700 and an oversized body with
 * 413 under its own limit, whatever the host's body parser settings are. It marks the body as
 * read so the app's parsers skip it.
 */
export function createMcpBodyReader(matches: (path: string) => number | null) {
  return function mcpBodyReader(req: McpRequest, _res: Response, next: NextFunction): void {
    const limit = req.method === 'POST' ? matches(req.path) : null;
    if (limit === null) return next();
    req._body = true;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req[MCP_RAW_BODY] = { ok: false, reason: 'too-large' };
      return next();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (body: McpRawBody) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req[MCP_RAW_BODY] = body;
      next();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        finish({ ok: false, reason: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish({ ok: true, text: Buffer.concat(chunks, size).toString('utf8') }));
    req.once('error', () => finish({ ok: false, reason: 'aborted' }));
    req.once('aborted', () => finish({ ok: false, reason: 'aborted' }));
  };
}
