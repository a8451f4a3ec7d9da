import { Catch, ForbiddenException, UnauthorizedException, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { TRANSPORT_ERROR_CODE, sendRpcError } from './mcp-http-responses';

/**
 * Shapes the guards' refusals the way MCP clients expect: 401 with `WWW-Authenticate: Bearer` and
 * no body; 403 with a JSON-RPC error body.
 */
@Catch(UnauthorizedException, ForbiddenException)
export class McpHttpExceptionFilter implements ExceptionFilter {
  /** @inheritdoc */
  catch(exception: UnauthorizedException | ForbiddenException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof UnauthorizedException) {
      response.status(401).setHeader('WWW-Authenticate', 'Bearer').end();
      return;
    }
    sendRpcError(response, 403, TRANSPORT_ERROR_CODE, exception.message);
  }
}
