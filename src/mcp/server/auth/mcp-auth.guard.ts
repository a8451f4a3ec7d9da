import { Inject, Injectable, type CanActivate, type Type } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../mcp.options';
import { insufficientScopeChallenge, McpBearerChallengeException, McpInsufficientScopeException, unauthorizedChallenge } from '../oauth/bearer-challenge';
import { mcpStrategyName, TOKEN_REJECTED } from './mcp-bearer.strategy';

/**
 * Creates the guard of one mount: its bearer strategy, no session, 401 on any failure. With the
 * `oauth` option the 401 names the resource metadata (and `invalid_token` for a rejected token),
 * and a principal without the mount's required scopes gets 403 `insufficient_scope`.
 */
export function createMcpAuthGuard(mount: string): Type<CanActivate> {
  @Injectable()
  class McpAuthGuard extends AuthGuard(mcpStrategyName(mount)) {
    constructor(@Inject(MCP_MODULE_OPTIONS) private readonly mcpOptions: McpResolvedOptions) {
      super();
    }

    override handleRequest<TUser>(error: unknown, user: TUser | false, info: unknown): TUser {
      if (error) throw error;
      const oauth = this.mcpOptions.oauth;
      if (!user) throw new McpBearerChallengeException(unauthorizedChallenge(oauth, info === TOKEN_REJECTED ? 'invalid' : 'missing'));
      if (oauth && oauth.requiredScopes.length > 0) {
        const granted = (user as unknown as McpPrincipal).scopes ?? [];
        if (oauth.requiredScopes.some((scope) => !granted.includes(scope))) {
          throw new McpInsufficientScopeException(insufficientScopeChallenge(oauth, oauth.requiredScopes), oauth.requiredScopes);
        }
      }
      return user;
    }
  }
  return McpAuthGuard;
}
