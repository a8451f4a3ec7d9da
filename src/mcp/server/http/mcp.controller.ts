import { All, Controller, Delete, HttpCode, Post, Req, Res, UseFilters, UseGuards, type CanActivate, type Type } from '@nestjs/common';
import type { Response } from 'express';
import { McpHttpExceptionFilter } from './mcp-http-exception.filter';
import type { McpRequest } from './mcp-body.reader';
import { McpHttpEndpoint } from './mcp-http.endpoint';

/**
 * Creates the controller of one mount at its path. POST and DELETE pass the origin check and the
 * bearer guard; every other method gets 405 before authentication.
 */
export function createMcpController(path: string, guards: Type<CanActivate>[]): Type<unknown> {
  @Controller(path)
  @UseFilters(McpHttpExceptionFilter)
  class McpController {
    constructor(private readonly endpoint: McpHttpEndpoint) {}

    @Post()
    @UseGuards(...guards)
    post(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
      return this.endpoint.post(req, res);
    }

    @Delete()
    @UseGuards(...guards)
    delete(@Req() req: McpRequest, @Res() res: Response): Promise<void> {
      return this.endpoint.delete(req, res);
    }

    @All()
    @HttpCode(405)
    notAllowed(@Res() res: Response): void {
      res.status(405).setHeader('Allow', 'POST, DELETE').end();
    }
  }
  return McpController;
}
