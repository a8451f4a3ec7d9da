import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { McpHeader } from '../../protocol/mcp-methods';
import { headerValue } from './mcp-http-checks';
import { McpNotAStreamRequest } from './mcp-http.errors';
import { acceptsEventStream } from '../sessions/mcp-sse-writer';

/**
 * Lets through only GETs that ask for a session's event stream (`Accept: text/event-stream` and
 * an `Mcp-Session-Id`); anything else gets 405 before authentication, like the other methods
 * the endpoint does not serve.
 */
@Injectable()
export class McpStreamRequestGuard implements CanActivate {
  /** @inheritdoc */
  canActivate(context: ExecutionContext): boolean {
    const { headers } = context.switchToHttp().getRequest<{ headers: IncomingHttpHeaders }>();
    if (!acceptsEventStream(headerValue(headers, 'accept')) || !headerValue(headers, McpHeader.SessionId))
      throw new McpNotAStreamRequest();
    return true;
  }
}
