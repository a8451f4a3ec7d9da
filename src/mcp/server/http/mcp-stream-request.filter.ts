import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { McpNotAStreamRequest } from './mcp-http.errors';
import { nodeResponseOf } from './mcp-http-adapter';
import { sendMethodNotAllowed } from '../responses/mcp-http-responses';

/** Answers `McpNotAStreamRequest` with 405 and the `Allow` header. */
@Catch(McpNotAStreamRequest)
export class McpStreamRequestFilter implements ExceptionFilter {
  /** @inheritdoc */
  catch(_error: McpNotAStreamRequest, host: ArgumentsHost): void {
    sendMethodNotAllowed(nodeResponseOf(host.switchToHttp().getResponse<object>()));
  }
}
