import { Catch, Injectable, type ArgumentsHost, type CanActivate, type ExceptionFilter, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { McpHeader } from '../../protocol/mcp.methods';
import { headerValue } from './mcp-http.checks';
import { acceptsEventStream } from './mcp-sse.writer';

/** The methods the endpoint serves, for `Allow`. */
export const MCP_ALLOWED_METHODS = 'GET, POST, DELETE';

/** A GET that is not a request for a session's event stream. */
export class McpNotAStreamRequest extends Error {
  constructor() {
    super('GET serves the event stream of a session: send Accept: text/event-stream and Mcp-Session-Id');
    this.name = 'McpNotAStreamRequest';
  }
}

/**
 * Lets through only GETs that ask for a session's event stream (`Accept: text/event-stream` and
 * an `Mcp-Session-Id`); anything else gets 405 before authentication, like the other methods
 * the endpoint does not serve.
 */
@Injectable()
export class McpStreamRequestGuard implements CanActivate {
  /** @inheritdoc */
  canActivate(context: ExecutionContext): boolean {
    const { headers } = context.switchToHttp().getRequest<Request>();
    if (!acceptsEventStream(headerValue(headers, 'accept')) || !headerValue(headers, McpHeader.SessionId)) throw new McpNotAStreamRequest();
    return true;
  }
}

/** Answers `McpNotAStreamRequest` with 405 and the `Allow` header. */
@Catch(McpNotAStreamRequest)
export class McpStreamRequestFilter implements ExceptionFilter {
  /** @inheritdoc */
  catch(_error: McpNotAStreamRequest, host: ArgumentsHost): void {
    sendMethodNotAllowed(host.switchToHttp().getResponse<Response>());
  }
}

/** 405 with the methods the endpoint serves. */
export function sendMethodNotAllowed(res: Response): void {
  res.status(405).setHeader('Allow', MCP_ALLOWED_METHODS).end();
}
