import { ForbiddenException, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { headerValue, isOriginAllowed } from './mcp-http-checks';

/** Refuses browser origins that are not allowed (DNS-rebinding protection), before authentication. */
@Injectable()
export class McpOriginGuard implements CanActivate {
  constructor(@Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions) {}

  /** @inheritdoc */
  canActivate(context: ExecutionContext): boolean {
    const origin = headerValue(context.switchToHttp().getRequest<{ headers: IncomingHttpHeaders }>().headers, 'origin');
    if (!isOriginAllowed(origin, this.options.allowedOrigins)) {
      throw new ForbiddenException(`Forbidden: origin ${origin} is not allowed`);
    }
    return true;
  }
}
