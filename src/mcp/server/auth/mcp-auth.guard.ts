import { Inject, Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpRequest } from '../http/mcp-body-reader';
import type { McpResolvedOptions } from '../mcp.options';
import { insufficientScopeChallenge, McpBearerChallengeException, McpInsufficientScopeException, unauthorizedChallenge } from '../oauth/bearer-challenge';
import { Toolset } from '../toolset';
import { mcpStrategyName, TOKEN_REJECTED } from './mcp-bearer.strategy';
import { missingScopes } from './missing-scopes';
import { peekRequest } from './request-peek';

/**
 * Creates the guard of one mount: its bearer strategy, no session, 401 on any failure. With the
 * `oauth` option the 401 names the resource metadata (and `invalid_token` for a rejected token),
 * and a principal without the mount's required scopes gets 403 `insufficient_scope`; so does a
 * `tools/call` of a tool whose `scopes` the principal lacks (the client may step up).
 */
export function createMcpAuthGuard(mount: string): Type<CanActivate> {
  @Injectable()
  class McpAuthGuard extends AuthGuard(mcpStrategyName(mount)) {
    constructor(
      @Inject(MCP_MODULE_OPTIONS) private readonly mcpOptions: McpResolvedOptions,
      private readonly toolset: Toolset,
    ) {
      super();
    }

    override async canActivate(context: ExecutionContext): Promise<boolean> {
      const allowed = (await super.canActivate(context)) as boolean;
      if (allowed && this.toolset.hasScopedTools) this.checkToolScopes(context.switchToHttp().getRequest<McpRequest>());
      return allowed;
    }

    override handleRequest<TUser>(error: unknown, user: TUser | false, info: unknown, context: ExecutionContext): TUser {
      if (error) throw error;
      const oauth = this.mcpOptions.oauth;
      if (!user) throw new McpBearerChallengeException(unauthorizedChallenge(oauth, info === TOKEN_REJECTED ? 'invalid' : 'missing'));
      if (oauth && missingScopes(oauth.requiredScopes, user as unknown as McpPrincipal).length > 0) {
        const id = peekRequest(context.switchToHttp().getRequest<McpRequest>())?.id ?? null;
        throw new McpInsufficientScopeException(insufficientScopeChallenge(oauth, oauth.requiredScopes), oauth.requiredScopes, id);
      }
      return user;
    }

    /** 403 for a call of a scoped tool the caller lacks scopes for; the challenge asks for the mount's and the tool's. */
    private checkToolScopes(req: McpRequest): void {
      const peeked = peekRequest(req);
      const tool = peeked?.tool === undefined ? undefined : this.toolset.get(peeked.tool);
      const scopes = tool?.scopes ?? [];
      if (missingScopes(scopes, req.user as McpPrincipal).length === 0) return;
      const needed = [...new Set([...(this.mcpOptions.oauth?.requiredScopes ?? []), ...scopes])];
      throw new McpInsufficientScopeException(insufficientScopeChallenge(this.mcpOptions.oauth, needed), needed, peeked?.id ?? null);
    }
  }
  return McpAuthGuard;
}
