import {
  Catch,
  ForbiddenException,
  HttpException,
  Logger,
  UnauthorizedException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { McpEventRejectedError } from '../../errors/mcp-event-rejected.errors';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { nodeResponseOf } from './mcp-http-adapter';
import { challengeOf, refusedRequestId } from '../oauth/bearer-challenge';
import { isUnavailableError } from './mcp-http-failures';
import { TRANSPORT_ERROR_CODE, sendEmpty, sendRpcError } from '../responses/mcp-http-responses';

/** A failure with the same text is logged at most once in this window, so an outage logs a line, not a flood. */
const LOG_WINDOW_MS = 10_000;

/**
 * Every error that leaves the endpoint becomes an answer an MCP client can read:
 * - the guards' refusals: 401 with `WWW-Authenticate` (the bearer guard's challenge) and no body;
 *   403 with a JSON-RPC body (and the challenge of a token that lacks scopes);
 * - other HTTP exceptions: their status with a JSON-RPC body;
 * - the database or another dependency unavailable: 503 with `Retry-After` and a JSON-RPC body;
 * - the database refused this request's audit row: 503 with a JSON-RPC body saying so and no
 *   `Retry-After` (the same request would be refused again); the event sink has logged the row;
 * - anything else: 500 with a JSON-RPC body (never Nest's generic page).
 * Once a stream has started, the response can only be ended.
 */
@Catch()
export class McpHttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('McpHttpEndpoint');
  private readonly lastLogged = new Map<string, number>();

  /** @inheritdoc */
  catch(exception: unknown, host: ArgumentsHost): void {
    const response = nodeResponseOf(host.switchToHttp().getResponse<object>());
    if (exception instanceof UnauthorizedException) {
      sendEmpty(response, 401, { 'WWW-Authenticate': challengeOf(exception) ?? 'Bearer' });
      return;
    }
    if (exception instanceof ForbiddenException) {
      const challenge = challengeOf(exception);
      if (challenge) response.setHeader('WWW-Authenticate', challenge);
      sendRpcError(response, 403, TRANSPORT_ERROR_CODE, exception.message, refusedRequestId(exception));
      return;
    }
    if (exception instanceof HttpException) {
      if (!response.headersSent) sendRpcError(response, exception.getStatus(), TRANSPORT_ERROR_CODE, exception.message);
      else response.end();
      return;
    }
    if (exception instanceof McpEventRejectedError) {
      if (response.headersSent) response.end();
      else
        sendRpcError(
          response,
          503,
          JsonRpcErrorCode.InternalError,
          'Service unavailable: the server could not record this request in its audit log (the database refused the row), so it is not answered',
        );
      return;
    }
    const unavailable = isUnavailableError(exception);
    const reason = (exception as Error)?.message ?? String(exception);
    this.log(unavailable ? `Service unavailable: ${reason}` : `Internal error: ${reason}`, exception);
    if (response.headersSent) {
      response.end();
      return;
    }
    if (unavailable) {
      response.setHeader('Retry-After', '1');
      sendRpcError(
        response,
        503,
        JsonRpcErrorCode.InternalError,
        'Service unavailable: a dependency of the server (its database) cannot be reached; retry later',
      );
      return;
    }
    sendRpcError(response, 500, JsonRpcErrorCode.InternalError, 'Internal error');
  }

  private log(line: string, exception: unknown): void {
    const now = Date.now();
    const last = this.lastLogged.get(line);
    if (last !== undefined && now - last < LOG_WINDOW_MS) return;
    if (this.lastLogged.size > 100) this.lastLogged.clear();
    this.lastLogged.set(line, now);
    this.logger.error(line, exception instanceof Error && !isUnavailableError(exception) ? exception.stack : undefined);
  }
}
