import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { McpNotAStreamRequest } from './mcp-http.errors';
import { sendMethodNotAllowed } from './mcp-http-responses';

/** Answers `McpNotAStreamRequest` with 405 and the `Allow` header. */
@Catch(McpNotAStreamRequest)
export class McpStreamRequestFilter implements ExceptionFilter {
  /** @inheritdoc */
  catch(_error: McpNotAStreamRequest, host: ArgumentsHost): void {
    sendMethodNotAllowed(host.switchToHttp().getResponse<Response>());
  }
}
