import {
  All,
  Controller,
  Delete,
  Get,
  HttpCode,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
  type CanActivate,
  type Type,
} from '@nestjs/common';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter';
import type { McpRequest } from './mcp-body-reader';
import { nodeResponseOf } from './mcp-http-adapter';
import { McpHttpEndpoint } from './mcp-http.endpoint';
import { McpStatelessEndpoint } from './mcp-stateless.endpoint';
import { sendMethodNotAllowed } from '../responses/mcp-http-responses';
import { McpStreamRequestFilter } from './mcp-stream-request.filter';
import { McpStreamRequestGuard } from './mcp-stream-request.guard';

/**
 * Creates the controller of one mount at its path. It runs on Express and on Fastify: the
 * endpoint reads the request's headers, principal and body (the same members on both) and writes
 * to the Node response under the adapter's (`nodeResponseOf`). POST, DELETE and GET (the session's event
 * stream) pass the origin check and the bearer guard; every other method, and a GET that does
 * not ask for an event stream of a session, gets 405 before authentication.
 */
export function createMcpController(path: string, guards: Type<CanActivate>[]): Type<unknown> {
  @Controller(path)
  @UseFilters(McpHttpExceptionFilter)
  class McpController {
    constructor(
      private readonly endpoint: McpHttpEndpoint,
      private readonly stateless: McpStatelessEndpoint,
    ) {}

    @Post()
    @UseGuards(...guards)
    post(@Req() req: McpRequest, @Res() res: object): Promise<void> {
      return this.endpoint.post(req, nodeResponseOf(res));
    }

    @Get()
    @UseGuards(McpStreamRequestGuard, ...guards)
    @UseFilters(McpStreamRequestFilter)
    get(@Req() req: McpRequest, @Res() res: object): Promise<void> {
      return this.endpoint.get(req, nodeResponseOf(res));
    }

    @Delete()
    @UseGuards(...guards)
    delete(@Req() req: McpRequest, @Res() res: object): Promise<void> {
      const response = nodeResponseOf(res);
      if (this.stateless.isStatelessVerb(req)) return Promise.resolve(this.stateless.methodNotAllowed(response));
      return this.endpoint.delete(req, response);
    }

    @All()
    @HttpCode(405)
    notAllowed(@Res() res: object): void {
      sendMethodNotAllowed(nodeResponseOf(res));
    }
  }
  return McpController;
}
