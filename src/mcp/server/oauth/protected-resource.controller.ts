import { Controller, Get, Header, HttpCode, Inject, NotFoundException, Options, Res, type Type } from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../mcp.options';
import { PROTECTED_RESOURCE_WELL_KNOWN, type McpProtectedResourceMetadata } from './mcp-oauth.options';

/** The one response method this controller needs; Express responses and Fastify replies both have it. */
interface HeaderSetter {
  header(name: string, value: string): unknown;
}

/** The well-known paths of a mount's metadata: suffixed with the mount's path, and the root one. */
export function protectedResourcePaths(path: string): string[] {
  const suffix = path === '/' || path === '' ? '' : path.startsWith('/') ? path.replace(/\/+$/, '') : `/${path.replace(/\/+$/, '')}`;
  return suffix ? [`${PROTECTED_RESOURCE_WELL_KNOWN}${suffix}`, PROTECTED_RESOURCE_WELL_KNOWN] : [PROTECTED_RESOURCE_WELL_KNOWN];
}

/**
 * Creates the controller that publishes a mount's Protected Resource Metadata (RFC 9728) at
 * `/.well-known/oauth-protected-resource<path>` and at the root variant. It is public (clients
 * read it before they have a token), cacheable, and readable from browsers (CORS for GET).
 * The routes exist for every mount, because with `forRootAsync` the `oauth` option is only known
 * after the module graph is built; a mount without `oauth` answers 404 there, as before. With
 * several mounts the root path describes the first mount registered.
 */
export function createProtectedResourceController(path: string): Type<unknown> {
  const paths = protectedResourcePaths(path);

  @Controller()
  class McpProtectedResourceController {
    constructor(@Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions) {}

    @Get(paths)
    @Header('Access-Control-Allow-Origin', '*')
    @Header('Content-Type', 'application/json')
    get(@Res({ passthrough: true }) res: HeaderSetter): McpProtectedResourceMetadata {
      const oauth = this.options.oauth;
      if (!oauth) throw new NotFoundException();
      res.header('Cache-Control', `public, max-age=${oauth.maxAgeSec}`);
      return oauth.document;
    }

    @Options(paths)
    @HttpCode(204)
    @Header('Access-Control-Allow-Origin', '*')
    @Header('Access-Control-Allow-Methods', 'GET, OPTIONS')
    @Header('Access-Control-Allow-Headers', '*')
    @Header('Access-Control-Max-Age', '86400')
    preflight(): void {
      if (!this.options.oauth) throw new NotFoundException();
    }
  }
  return McpProtectedResourceController;
}
