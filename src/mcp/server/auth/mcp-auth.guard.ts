import { Injectable, UnauthorizedException, type CanActivate, type Type } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { mcpStrategyName } from './mcp-bearer.strategy';

/** Creates the guard of one mount: its bearer strategy, no session, 401 on any failure. */
export function createMcpAuthGuard(mount: string): Type<CanActivate> {
  @Injectable()
  class McpAuthGuard extends AuthGuard(mcpStrategyName(mount)) {
    override handleRequest<TUser>(error: unknown, user: TUser | false): TUser {
      if (error) throw error;
      if (!user) throw new UnauthorizedException();
      return user;
    }
  }
  return McpAuthGuard;
}
